"""``grad_fn._saved_<name>``: the values a node saved, under PyTorch's names (self, other, result, exponent), as
PyTorch's node attributes give them: the leaf itself, a new tensor over the output with the node as grad_fn, None
for what was not saved, the number for a scalar; unpack_hook runs at each read under saved_tensors_hooks."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd.graph import saved_tensors_hooks


def test_mul_saves_self_and_other_the_leaves_themselves():
    a = mt.tensor([1.0, -2.0], requires_grad=True)
    b = mt.tensor([3.0, 4.0], requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    c = mt.tensor([5.0, 6.0])  # needs no gradient: a is not saved (other's gradient is not needed)
    y = a * c
    assert y.grad_fn._saved_self is None
    np.testing.assert_array_equal(y.grad_fn._saved_other.numpy(), [5.0, 6.0])


def test_a_saved_output_is_a_new_tensor_with_the_node_as_grad_fn():
    a = mt.tensor([0.5, 1.0], requires_grad=True)
    for y in (a.exp(), a.sqrt(), mt.tanh(a), mt.sigmoid(a)):
        r = y.grad_fn._saved_result
        assert r is not y and r.equal(y) and r.grad_fn is y.grad_fn and r.requires_grad
    h = a * 2
    y = h.sin()  # a non-leaf input: a new tensor with that input's grad_fn
    s = y.grad_fn._saved_self
    assert s.equal(h) and s.grad_fn is h.grad_fn


def test_pow_exponent_is_the_number_and_unknown_names_raise():
    a = mt.tensor([1.5, 2.0], requires_grad=True)
    y = a.pow(2)
    assert y.grad_fn._saved_exponent == 2 and y.grad_fn._saved_self is a
    with pytest.raises(AttributeError, match="'PowBackward0' object has no attribute '_saved_foo'"):
        y.grad_fn._saved_foo


def test_read_after_backward_raises_and_hooks_unpack_at_each_read():
    a = mt.ones(3, requires_grad=True)
    y = a * a
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_self
    reads = []
    with saved_tensors_hooks(lambda t: ("packed", t), lambda p: reads.append(1) or p[1] * 10):
        y = a.pow(2)
    np.testing.assert_array_equal(y.grad_fn._saved_self.detach().numpy(), [10.0, 10.0, 10.0])
    y.grad_fn._saved_self
    assert len(reads) == 2 and y.grad_fn._saved_exponent == 2


@pytest.mark.torch
def test_names_and_values_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([0.3, 0.7, 1.1])
    for op in ("exp", "log", "sin", "cos", "sqrt", "tanh", "sigmoid", "relu", "abs", "reciprocal"):
        ours_in, theirs_in = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ours, theirs = getattr(mt, op)(ours_in).grad_fn, getattr(torch, op)(theirs_in).grad_fn
        names = [n for n in dir(theirs) if n.startswith("_saved_")]
        assert names, op
        for n in names:
            np.testing.assert_allclose(getattr(ours, n).detach().numpy(), getattr(theirs, n).detach().numpy())
