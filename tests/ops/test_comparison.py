"""isclose, allclose, equal and the bit shifts (``<<``, ``>>``): NumPy references over broadcast shapes,
PyTorch's dtype rules and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, broadcast_pairs, randn, seeds


@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, rtol=st.sampled_from([1e-5, 0.1, 0.0]),
       atol=st.sampled_from([1e-8, 0.5, 0.0]), equal_nan=st.booleans())
def test_isclose_matches_numpy(shapes, seed, rtol, atol, equal_nan):
    (sa, sb), out_shape = shapes
    a, b = randn(seed, sa), randn(seed + 1, sb)
    b = np.where(randn(seed + 2, sb) > 0, b, np.broadcast_to(a, out_shape).reshape(-1)[0] * 1.0000001) \
        if b.size else b
    a = np.where(np.abs(a) > 1.5, np.nan, a)
    got = mt.isclose(mt.tensor(a), mt.tensor(b), rtol=rtol, atol=atol, equal_nan=equal_nan)
    expected = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert got.dtype is mt.bool and got.shape == out_shape and np.array_equal(got.numpy(), expected)
    assert mt.tensor(a).isclose(mt.tensor(b), rtol, atol, equal_nan).tolist() == expected.tolist()
    assert mt.allclose(mt.tensor(a), mt.tensor(b), rtol, atol, equal_nan) is bool(np.all(expected))


def test_isclose_corners_and_errors():
    inf, nan = float("inf"), float("nan")
    x = mt.tensor([inf, -inf, nan, 1.0])
    assert mt.isclose(x, mt.tensor([inf, inf, nan, 1.0 + 1e-6])).tolist() == [True, False, False, True]
    assert mt.isclose(x, x, equal_nan=True).tolist() == [True, True, True, True]
    assert mt.isclose(mt.tensor([1, 2]), mt.tensor([1, 3])).tolist() == [True, False]
    assert mt.isclose(mt.tensor([True, False]), mt.tensor([True, True])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        mt.isclose(mt.ones(2), mt.ones(2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="Long did not match Float"):
        mt.allclose(mt.tensor([1]), mt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero"):
        mt.isclose(mt.ones(1), mt.ones(1), rtol=-1)
    with pytest.raises(TypeError, match="'other' \\(position 2\\) must be Tensor"):
        mt.isclose(mt.ones(1), 1.0)


def test_equal():
    i = mt.tensor([1, 2, 3])
    assert mt.equal(i, mt.tensor([1, 2, 3])) is True and i.equal(mt.tensor([1.0, 2.0, 3.0])) is True
    assert mt.equal(i, mt.tensor([1, 2, 4])) is False and mt.equal(i, i[:2]) is False
    assert mt.equal(mt.ones(2, 1), mt.ones(2)) is False  # broadcastable is not equal: shapes differ


@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, dtype=st.sampled_from([np.int64, np.int32, np.int16, np.uint8]))
def test_shifts_match_numpy(shapes, seed, dtype):
    (sa, sb), out_shape = shapes
    rng = np.random.default_rng(seed)
    a = rng.integers(-100 if dtype != np.uint8 else 0, 100, sa).astype(dtype)
    b = rng.integers(0, 6, sb).astype(dtype)
    left, right = mt.tensor(a) << mt.tensor(b), mt.tensor(a) >> mt.tensor(b)
    assert left.dtype.np == dtype and left.shape == out_shape
    assert np.array_equal(left.numpy(), np.left_shift(a, b)) and np.array_equal(right.numpy(), np.right_shift(a, b))
    assert np.array_equal(mt.bitwise_left_shift(mt.tensor(a), 2).numpy(), np.left_shift(a, dtype(2)))
    assert np.array_equal(mt.tensor(a).bitwise_right_shift(1).numpy(), np.right_shift(a, dtype(1)))


def test_shift_forms_and_errors():
    i = mt.tensor([1, 2, 3])
    assert (i << 2).tolist() == [4, 8, 12] and (1 << i).tolist() == [2, 4, 8] and (16 >> i).tolist() == [8, 4, 2]
    assert (mt.tensor([-8]) >> 1).tolist() == [-4]  # arithmetic: the sign stays
    assert (mt.tensor([1]) << 70).tolist() == [0]  # past the width, as PyTorch
    j = i.clone()
    j <<= 1
    assert j.tolist() == [2, 4, 6] and i.clone().bitwise_right_shift_(1).tolist() == [0, 1, 1]
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        mt.ones(2) << 1
    with pytest.raises(NotImplementedError, match="rshift"):
        mt.bitwise_right_shift(i, mt.ones(3))


@pytest.mark.torch
def test_comparisons_match_pytorch():
    torch = pytest.importorskip("torch")
    a = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf, 2.0])
    b = np.array([1.0, 1.0, np.nan, np.inf, 2.1])
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.1, "atol": 0.0}):
        assert mt.isclose(mt.tensor(a), mt.tensor(b), **kwargs).tolist() == \
            torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs).tolist()
    i = np.array([-9, 5, 1, 255])
    for shift in (0, 1, 3, 63, 64, 70):
        assert (mt.tensor(i) << shift).tolist() == (torch.tensor(i) << shift).tolist(), shift
        assert (mt.tensor(i) >> shift).tolist() == (torch.tensor(i) >> shift).tolist(), shift
