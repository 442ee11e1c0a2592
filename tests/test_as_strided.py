"""``as_strided`` (function, method, ``as_strided_``): views of the storage at element strides and offset,
differentiable (the gradient adds up at each storage place read); and no-op views (``view``, ``reshape``,
``view_as``... to the same shape) are new tensors, as PyTorch's. NumPy references, torch twins."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt


def _reference(storage: np.ndarray, size, stride, offset) -> np.ndarray:
    """storage[offset + sum_k i_k * stride_k] for every index i of ``size``: the flat places and values."""
    places = offset + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - k)) * s
                          for k, (n, s) in enumerate(zip(size, stride)))
    places = np.broadcast_to(places, size)
    return places, storage[places]


CASES = [((2, 2), (1, 2), 1), ((3, 3), (1, 1), 0), ((2, 3), (0, 1), 2), ((4,), (2,), 1), ((), (), 5),
         ((2, 0), (1, 1), 0)]


@pytest.mark.parametrize("size,stride,offset", CASES)
def test_values_and_gradient_against_numpy(size, stride, offset):
    data = np.arange(1.0, 9.0)
    x = mt.tensor(data, requires_grad=True)
    y = mt.as_strided(x, size, stride, offset)
    places, values = _reference(data, size, stride, offset)
    np.testing.assert_array_equal(y.detach().numpy(), values)
    assert y.stride() == tuple(stride) and y.storage_offset() == offset
    w = np.random.default_rng(0).standard_normal(size)
    (y * mt.tensor(w)).sum().backward()
    expected = np.zeros(8)
    np.add.at(expected, places.reshape(-1), w.reshape(-1))  # places read twice get both gradients
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_of_a_view_counts_from_the_storage():
    base = mt.arange(12.0)
    v = base[2:].view(2, 5)
    assert v.as_strided((2,), (1,)).tolist() == [2.0, 3.0]  # offset defaults to v's own (2)
    assert v.as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]
    t = base.view(3, 4).t()  # non-contiguous input: the gradient goes back to its layout
    t.requires_grad_()
    y = t.as_strided((2, 2), (4, 1), 1)  # storage places 1, 2, 5, 6 = t[1, 0], t[2, 0], t[1, 1], t[2, 1]
    assert y.tolist() == [[1.0, 2.0], [5.0, 6.0]]
    y.sum().backward()
    expected = np.zeros((4, 3))
    expected[1:3, 0:2] = 1.0
    np.testing.assert_array_equal(t.grad.numpy(), expected)


def test_shares_memory_and_version():
    x = mt.zeros(6)
    y = x.as_strided((2, 2), (3, 1), 1)
    y.add_(1)
    assert x.tolist() == [0.0, 1.0, 1.0, 0.0, 1.0, 1.0] and x._version == y._version == 1


def test_errors():
    x = mt.zeros(6)
    with pytest.raises(RuntimeError, match=r"^setStorage: sizes \[3, 3\], strides \[1, 1\], storage offset 5, and "
                       r"itemsize 4 requiring a storage size of 40 are out of bounds for storage of size 24$"):
        x.as_strided((3, 3), (1, 1), 5)
    with pytest.raises(RuntimeError, match="Negative strides are not supported"):
        x.as_strided((2,), (-1,), 3)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        x.as_strided((2, 2), (1,))


def test_as_strided_in_place():
    leaf = mt.arange(6.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.as_strided_((2,), (1,))
    y = leaf * 1
    assert y.as_strided_((2, 2), (1, 1)) is y and y.shape == (2, 2)
    y.sum().backward()
    assert leaf.grad.tolist() == [1.0, 2.0, 1.0, 0.0, 0.0, 0.0]


@pytest.mark.torch
@pytest.mark.parametrize("size,stride,offset", CASES)
def test_matches_pytorch(size, stride, offset):
    torch = pytest.importorskip("torch")
    out = []
    for m in (mt, torch):
        x = m.tensor(np.arange(1.0, 9.0), requires_grad=True)
        base = x * 2  # a non-leaf: also as_strided_
        y = base.view(2, 4)[:, 1:].as_strided(size, stride, offset)
        (y * y).sum().backward()
        z = (x * 1)
        z.as_strided_(size, stride, offset)
        out.append((y.detach().numpy(), x.grad.numpy(), tuple(z.shape), z.stride()))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


NO_OP_VIEWS = {
    "view": lambda x: x.view(x.shape), "view_as": lambda x: x.view_as(x), "reshape": lambda x: x.reshape(3, 2),
    "reshape_as": lambda x: x.reshape_as(x), "permute": lambda x: x.permute(0, 1),
    "expand": lambda x: x.expand(3, 2), "squeeze": lambda x: x.squeeze(), "movedim": lambda x: x.movedim(0, 0),
    "unflatten": lambda x: x.unflatten(0, (3,)), "narrow": lambda x: x.narrow(0, 0, 3), "slice": lambda x: x[:],
    "ellipsis": lambda x: x[...], "as_strided": lambda x: x.as_strided((3, 2), (2, 1)),
}


@pytest.mark.parametrize("name", NO_OP_VIEWS)
def test_a_no_op_view_is_a_new_tensor(name):
    x = mt.randn(3, 2, requires_grad=True)
    y = x * 1
    v = NO_OP_VIEWS[name](y)
    assert v is not y and v.data_ptr() == y.data_ptr() and v.grad_fn is not y.grad_fn
    v.mul_(2)  # a view: the write shows in y and y's history (CopySlices)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 2), 2.0))


def test_flatten_and_contiguous_return_self_as_pytorch():
    x = mt.randn(3)
    assert x.flatten() is x and x.contiguous() is x and x.ravel() is not x
    m = mt.randn(3, 2)
    assert m.flatten(1, 1) is m and m.flatten() is not m


@pytest.mark.torch
def test_identity_matches_pytorch():
    torch = pytest.importorskip("torch")
    for name, f in NO_OP_VIEWS.items():
        for m in (mt, torch):
            t = m.randn(3, 2)
            assert f(t) is not t, (name, m.__name__)
    for m in (mt, torch):
        t = m.randn(3)
        assert (t.flatten() is t, t.ravel() is t, t.t() is t, t.T is t) == (True, False, False, False)
