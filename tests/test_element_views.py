"""An index that picks one element gives a 0-d view, as PyTorch's: in-place ops on it (``x[0].mul_(2)``,
``v = w[1, 0]; v += 5``) write into the tensor and bump its version; NumPy's own ``a[0]`` is a scalar copy,
which lost those writes."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

WRITES = {  # name: what it does to w, a float tensor of shape (2, 3) holding 0..5
    "mul_ of x[0, 0]": lambda w, _: w[0, 0].add_(1).mul_(2),
    "zero_ of a row's element": lambda w, _: w[1][2].zero_(),
    "fill_ of w[0, 1]": lambda w, _: w[0, 1].fill_(9),
    "+= on a kept element": lambda w, _: w[1, 0].__iadd__(5),
    "select then index": lambda w, _: w.select(1, 2)[1].add_(100),
    "unbind": lambda w, _: w.unbind(0)[0][0].sub_(50),
    "iteration": lambda w, _: [row[1].add_(1) for row in w],
    "narrow then squeeze": lambda w, _: w[0].narrow(0, 1, 1).squeeze().add_(10),
    "a transpose's element": lambda w, _: w.t()[2, 1].mul_(-1),
    "a negative index": lambda w, _: w[-1, -1].copy_(w[0, 0] + 7),
    "a 0-d tensor as index": lambda w, lib: w[lib.tensor(1), lib.tensor(1)].clamp_(max=1),
}


def apply(lib, name):
    w = lib.arange(6.0).reshape(2, 3)
    WRITES[name](w, lib)
    return w.numpy()


@pytest.mark.parametrize("name", list(WRITES))
def test_writes_through_one_element_reach_the_tensor(name):
    before = np.arange(6.0).reshape(2, 3)
    assert not np.array_equal(apply(mt, name), before)


def test_the_element_is_a_view_sharing_the_version_counter():
    w = mt.zeros(2, 3)
    v = w[1, 2]
    assert v.ndim == 0 and v.data_ptr() == w.data_ptr() + 5 * 4
    v += 5
    assert w._version == v._version == 1 and w[1, 2].item() == 5.0
    assert w[1, 2].item() == 5.0 and type(w[1, 2].item()) is float


def test_a_write_through_an_element_of_a_graph_tensor_rewrites_its_history():
    x = mt.ones(3, requires_grad=True)
    y = x.clone()
    y[0].mul_(3)  # y's history becomes CopySlices, as PyTorch's
    assert y.detach().numpy().tolist() == [3.0, 1.0, 1.0]
    y.sum().backward()
    assert x.grad.numpy().tolist() == [3.0, 1.0, 1.0]


@pytest.mark.torch
@pytest.mark.parametrize("name", list(WRITES))
def test_same_values_as_pytorch(name):
    torch = pytest.importorskip("torch")
    assert np.array_equal(apply(mt, name), apply(torch, name))
