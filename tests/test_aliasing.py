"""Which results share memory with their input, as PyTorch's: a write into a copy must not reach the input
(``flip`` and a ``pad`` that pads nothing were views once, so the write did), and a write into a view must.
The torch-marked sweep compares each call's aliasing with PyTorch's; the complex-conjugation calls on a real
tensor return the input itself, as PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn import functional as F

# (call, what PyTorch gives: "same" object, an "alias" of the input's memory, or a "copy")
CALLS = [
    ("x.flip(0)", "copy"), ("x.fliplr()", "copy"), ("x.flipud()", "copy"), ("x.rot90(1, [1, 2])", "copy"),
    ("x.rot90(0, [1, 2])", "copy"), ("x.roll(1, 0)", "copy"), ("T.nn.functional.pad(x, (0, 0))", "copy"),
    ("T.nn.functional.pad(x, (0, 0), mode='replicate')", "copy"), ("T.nn.functional.pad(x, (-1, 0))", "copy"),
    ("T.cat([x])", "copy"), ("T.stack([x])", "copy"), ("x.clone()", "copy"), ("x[[0]]", "copy"),
    ("x[x > 3]", "copy"), ("x.transpose(1, 2).reshape(2, 12)", "copy"), ("x.transpose(1, 2).flatten()", "copy"),
    ("x.narrow(1, 0, 2)", "alias"), ("x.select(1, 0)", "alias"), ("x.diagonal(0, 1, 2)", "alias"),
    ("x.transpose(0, 1)", "alias"), ("x.permute(2, 0, 1)", "alias"), ("x.view(6, 4)", "alias"),
    ("x.view_as(x)", "alias"), ("x.reshape(2, 3, 4)", "alias"), ("x.expand(2, 3, 4)", "alias"), ("x[0]", "alias"),
    ("x[0, 0]", "alias"), ("x[...]", "alias"), ("x[None]", "alias"), ("x.unbind(0)[0]", "alias"),
    ("x.detach()", "alias"), ("x.unfold(2, 2, 1)", "alias"), ("x.squeeze()", "alias"),
    ("x.contiguous()", "same"), ("x.to(x.dtype)", "same"), ("x.float()", "same"), ("x.conj()", "same"),
    ("x.resolve_conj()", "same"), ("x.resolve_neg()", "same"), ("x.conj_physical()", "same"), ("x.real", "same"),
    ("T.real(x)", "same"), ("T.broadcast_tensors(x, x)[0]", "same"), ("T.broadcast_tensors(x[0], x)[0]", "alias"),
    ("T.broadcast_to(x, (2, 3, 4))", "alias"), ("x.expand_as(x)", "alias"), ("T.conj(x)", "same"),
    ("T.nn.functional.dropout(x, 0.5, training=False)", "same"),
]


def _kind(T, x, y, shares) -> str:
    return "same" if y is x else ("alias" if shares(y, x) else "copy")


def _mt_shares(a, b) -> bool:
    return bool(np.shares_memory(a.numpy(), b.numpy()))


@pytest.mark.parametrize("call,expected", CALLS)
def test_each_result_shares_memory_as_pytorchs_does(call, expected):
    x = mt.arange(24, dtype=mt.float32).reshape(2, 3, 4)
    before = x.numpy().copy()
    y = eval(call, {"x": x, "T": mt})
    assert _kind(mt, x, y, _mt_shares) == expected
    if expected == "copy":  # the write stays in the copy
        y.add_(100)
        np.testing.assert_array_equal(x.numpy(), before)


def test_a_write_into_a_flipped_tensor_keeps_the_gradient_of_the_copy():
    x = mt.arange(4.0, requires_grad=True)
    y = x.flip(0)
    y[0] = 9.0
    (y * mt.arange(4.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 2.0, 1.0, 0.0])  # x[3] was overwritten in y only
    np.testing.assert_array_equal(x.detach().numpy(), [0.0, 1.0, 2.0, 3.0])


def test_the_conjugation_calls_on_real_tensors():
    x = mt.arange(3.0)
    assert not x.is_conj() and not x.is_neg() and not mt.is_conj(x) and not mt.is_neg(x)
    assert x.conj_physical_() is x
    for call in (lambda: x.imag, lambda: mt.imag(x)):
        with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
            call()
    assert F.pad(x, (0, 0)) is not x


@pytest.mark.torch
@pytest.mark.parametrize("call,expected", CALLS)
def test_the_expectations_are_pytorchs(call, expected):
    torch = pytest.importorskip("torch")
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    y = eval(call, {"x": x, "T": torch})
    same_storage = lambda a, b: a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # noqa: E731
    assert _kind(torch, x, y, same_storage) == expected


@pytest.mark.parametrize("requires_grad", [False, True])
def test_is_view_and_base_as_pytorch(requires_grad):
    """``Tensor._is_view()`` / ``_base`` (private in PyTorch, read by torchviz): the first base through chains of
    views; ``detach``, arithmetic and a ``reshape`` that copies make no view."""
    x = mt.ones(3, 4, requires_grad=requires_grad)
    assert not x._is_view() and x._base is None
    for v in (x[1:], x.view(12), x.t(), x.reshape(12), x[1:][0:1].view(4)):
        assert v._is_view() and v._base is x
    for t in (x.detach(), x * 2, x.transpose(0, 1).reshape(12)):
        assert not t._is_view() and t._base is None
