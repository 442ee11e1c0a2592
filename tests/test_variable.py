"""``autograd.Variable`` (PyTorch's deprecated wrapper) and ``Tensor.data`` as weight-init and GAN code use
them; each idiom runs on minitensor and, in the torch-marked twin, on PyTorch with the same results."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


def variable_idioms(lib):
    """The ways old programs call Variable; returns what they observe."""
    Variable = lib.autograd.Variable
    x = lib.tensor(np.arange(4.0), dtype=lib.float32)
    v = Variable(x, requires_grad=True)
    plain = Variable(x)
    valid = Variable(lib.Tensor(3, 1).fill_(1.0), requires_grad=False)
    a = lib.ones(2, requires_grad=True)
    detached = Variable(a * 2)
    plain.add_(1)  # shares x's memory
    empty = Variable()
    return {"v": (v.requires_grad, v.is_leaf, v.grad_fn is None), "plain": plain.requires_grad,
            "shared": x.tolist(), "valid": (valid.tolist(), valid.requires_grad),
            "detached": (detached.requires_grad, detached.grad_fn is None, detached.is_leaf),
            "isinstance": (isinstance(v, Variable), isinstance(lib.nn.Parameter(lib.ones(1)), Variable),
                           isinstance(3, Variable), isinstance(np.ones(1), Variable)),
            "empty": (tuple(empty.shape), str(empty.dtype).split(".")[-1]),
            "is_tensor": type(v) is lib.Tensor}


def data_idioms(lib):
    """``.data`` as weight-init code uses it: shares memory, detached, in-place writes through it do not move
    the tensor's version (so a saved tensor changed through .data is not caught, as in PyTorch)."""
    lib.manual_seed(0)
    w = lib.zeros(3, requires_grad=True)
    d = w.data
    seen = {"detached": (d.requires_grad, d.grad_fn is None)}
    w.data.normal_(0.0, 0.02)
    seen["normal_shared"] = bool((w.detach() == d).all()) and float(w.detach().abs().sum()) > 0
    seen["version"] = w._version
    w.data.copy_(lib.ones(3))
    w.data.mul_(3)
    seen["copied"] = w.tolist()
    y = (w * w).sum()
    w.data.add_(1)  # no version bump: backward uses the new values, no error
    y.backward()
    seen["grad"] = w.grad.tolist()
    w.data = lib.full((3,), 2.0)
    seen["assigned"] = (w.tolist(), w.requires_grad, w.is_leaf)
    lin = lib.nn.Linear(2, 2)
    lin.weight.data.fill_(0.5)
    lin.bias.data.zero_()
    seen["module"] = (lin(lib.ones(1, 2)).tolist(), lin.weight.requires_grad)
    return seen


def test_variable_returns_detached_tensors():
    seen = variable_idioms(mt)
    assert seen["v"] == (True, True, True) and seen["plain"] is False
    assert seen["shared"] == [1.0, 2.0, 3.0, 4.0]
    assert seen["valid"] == ([[1.0], [1.0], [1.0]], False)
    assert seen["detached"] == (False, True, True)
    assert seen["isinstance"] == (True, True, False, False)
    assert seen["empty"] == ((0,), "float32") and seen["is_tensor"]


def test_variable_errors_and_volatile():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        mt.autograd.Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile was removed"):
        v = mt.autograd.Variable(mt.ones(2), volatile=True)
    assert not v.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        mt.autograd.Variable(mt.ones(2, dtype=mt.int64), requires_grad=True)


def test_data_shares_memory_without_version_bump():
    seen = data_idioms(mt)
    assert seen["detached"] == (False, True) and seen["normal_shared"] and seen["version"] == 0
    assert seen["copied"] == [3.0, 3.0, 3.0]
    assert seen["grad"] == [8.0, 8.0, 8.0]
    assert seen["assigned"] == ([2.0, 2.0, 2.0], True, True)
    assert seen["module"] == ([[1.0, 1.0]], True)


@pytest.mark.torch
def test_variable_and_data_match_torch():
    torch = pytest.importorskip("torch")
    assert variable_idioms(mt) == variable_idioms(torch)
    ours, theirs = data_idioms(mt), data_idioms(torch)
    assert ours == theirs
