"""``narrow`` with negative starts, index bounds of ``gather`` / ``index_select``, and ``view(dtype)``
reinterpreting bytes: PyTorch's results and errors (NumPy's slicing and ``ndarray.view`` as references)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, nonscalar_shapes, randn, seeds, t64


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_narrow_wraps_a_negative_start(shape, seed, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    start = data.draw(st.integers(-n, n))
    s = start + n if start < 0 else start
    length = data.draw(st.integers(0, n - s))
    x = randn(seed, shape)
    expected = np.take(x, np.arange(s, s + length), axis=dim)
    t = t64(x, False)
    assert_close(t.narrow(dim, start, length), expected)
    assert_close(mt.narrow(t, dim, mt.tensor(start), length), expected)
    if expected.size:
        assert np.shares_memory(t.narrow(dim, start, length).numpy(), t.numpy())
    check_grad(lambda u: u.narrow(dim, start, length), x)


def test_narrow_reproducers_and_errors():
    x = mt.arange(10.0)
    assert x.narrow(0, -2, 2).tolist() == [8.0, 9.0]  # was [] (slice(-2, 0))
    assert x.narrow(0, -3, 3).tolist() == [7.0, 8.0, 9.0]
    assert x.narrow(0, 10, 0).tolist() == []
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        x.narrow(0, 5, -2)  # was [] silently
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of \[-10, 10\], but got 11"):
        x.narrow(0, 11, 0)
    with pytest.raises(IndexError, match="start out of range"):
        x.narrow(0, -11, 1)
    with pytest.raises(RuntimeError, match=r"start \(8\) \+ length \(3\) exceeds dimension size \(10\)"):
        x.narrow(0, 8, 3)
    with pytest.raises(RuntimeError, match="0-dim"):
        mt.tensor(1.0).narrow(0, 0, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.narrow(1, 0, 1)


def test_gather_and_index_select_refuse_indices_out_of_range(device):
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 3"):
        x.gather(1, mt.tensor([[0], [-1]], device=device))  # was wrapped to 3 silently
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x.gather(1, mt.tensor([[3], [0]], device=device))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(1, mt.tensor([0, -1], device=device))  # was wrapped silently
    with pytest.raises(IndexError, match="index out of range in self"):
        mt.index_select(x, 0, mt.tensor([2], device=device))
    assert x.gather(1, mt.tensor([[2], [0]], device=device)).tolist() == [[3.0], [4.0]]
    assert x.index_select(0, mt.tensor([1, 1], device=device)).tolist() == [[4.0, 5.0, 6.0]] * 2
    assert x.index_select(0, mt.tensor([], dtype=mt.int64, device=device)).shape == (0, 3)


_DTYPES = [mt.bool, mt.uint8, mt.int8, mt.int16, mt.float16, mt.int32, mt.float32, mt.int64, mt.float64]


@SETTINGS
@given(seed=seeds, src=st.sampled_from(_DTYPES[1:]), dst=st.sampled_from(_DTYPES),
       lead=st.lists(st.integers(1, 3), max_size=2), last=st.integers(1, 4))
def test_view_dtype_reinterprets_the_bytes(seed, src, dst, lead, last):
    """Same item size: same shape; otherwise the last dim scales by the ratio (NumPy's ndarray.view)."""
    shape = (*lead, last * max(dst.itemsize // src.itemsize, 1))
    raw = np.random.default_rng(seed).integers(0, 256, (*shape, src.itemsize), dtype=np.uint8)
    if dst is mt.bool:
        raw = raw % 2  # a bool byte must be 0 or 1 for the values to compare
    a = np.ascontiguousarray(raw).view(src.np).reshape(shape)
    x = mt.from_numpy(a.copy())
    v = x.view(dst)
    expected = a.view(dst.np)
    assert v.dtype is dst and v.shape == expected.shape
    np.testing.assert_array_equal(v.numpy().view(np.uint8), expected.view(np.uint8))
    assert np.shares_memory(v.numpy(), x.numpy())


def test_view_dtype_reproducer_grad_and_errors(device):
    x = mt.tensor([1.0, -2.0, 0.5], device=device)
    assert x.view(mt.int32).tolist() == [1065353216, -1073741824, 1056964608]  # was [1, -2, 0]
    assert x.view(dtype=mt.uint8).shape == (12,) and mt.zeros(2, 4).view(mt.float64).shape == (2, 2)
    w = mt.ones(3, requires_grad=True)
    assert not w.view(mt.int32).requires_grad and not w.view(mt.float32).requires_grad  # not differentiable
    v = x.view(mt.int32)
    v[0] = 0
    assert x.tolist() == [0.0, -2.0, 0.5]  # one memory
    with pytest.raises(RuntimeError, match="self.dim\\(\\) cannot be 0"):
        mt.tensor(1.0).view(mt.float64)
    with pytest.raises(RuntimeError, match=r"self.size\(-1\) must be divisible by 2"):
        mt.zeros(2, 3).view(mt.float64)
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1"):
        mt.zeros(4, 4).t().view(mt.int8)
    with pytest.raises(RuntimeError, match=r"self.stride\(0\) must be divisible by 2"):
        mt.zeros(3, 5)[:, :2].view(mt.float64)
