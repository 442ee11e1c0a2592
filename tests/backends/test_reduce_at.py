"""``reduce_at`` (``backends/generic/shape.py``: ``ufunc.at`` by sort and segmented scan, where CuPy has no
``ufunc.at``) against NumPy's own ``ufunc.at``, over shapes, index forms, repeated positions and dtypes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minitensor.backends.generic.shape import reduce_at

OPS = (np.add, np.multiply, np.maximum, np.minimum)
DTYPES = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.int64, np.bool_)


@st.composite
def problems(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    n = draw(st.integers(0, 12))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    form = draw(st.sampled_from(["one array", "tuple", "with slice"]))
    if form == "one array" or len(shape) == 1:
        index: tuple = (rng.integers(-shape[0], shape[0], n),)  # negative indices wrap, as NumPy's
    elif form == "tuple":
        index = tuple(rng.integers(0, d, n) for d in shape)
    else:
        index = (slice(None), rng.integers(0, shape[1], n))
    return shape, index, seed


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from(OPS), st.sampled_from(DTYPES))
def test_reduce_at_is_numpys_ufunc_at(problem, op, dtype):
    shape, index, seed = problem
    rng = np.random.default_rng(seed + 1)
    base = rng.integers(-3, 4, shape).astype(dtype)
    ref_shape = np.empty(shape)[index].shape
    src = rng.integers(-3, 4, ref_shape).astype(dtype)
    expected = base.copy()
    with np.errstate(all="ignore"):
        op.at(expected, index, src)
        got = reduce_at(np, op, base.copy(), index, src)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))


def test_a_long_run_into_one_position_and_nan():
    out = np.ones(3)
    reduce_at(np, np.multiply, out, (np.zeros(1000, np.int64),), np.full(1000, 1.001))
    np.testing.assert_allclose(out, [1.001 ** 1000, 1, 1], rtol=1e-12)
    out = np.zeros(2)
    reduce_at(np, np.maximum, out, (np.array([0, 0, 1]),), np.array([np.nan, 5.0, -1.0]))
    assert np.isnan(out[0]) and out[1] == 0.0


def test_a_strided_view_is_written_in_place():
    base = np.arange(12.0).reshape(3, 4)
    view = base[:, ::2]  # not contiguous
    reduce_at(np, np.add, view, (np.array([2, 2, 0]), np.array([1, 1, 0])), np.array([1.0, 2.0, 10.0]))
    expected = np.arange(12.0).reshape(3, 4)
    expected[2, 2] += 3.0
    expected[0, 0] += 10.0
    np.testing.assert_array_equal(base, expected)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_integer_sums_wrap_around_as_numpy(dtype):
    out = np.zeros(1, dtype)
    reduce_at(np, np.add, out, (np.zeros(300, np.int64),), np.ones(300, dtype))
    assert out[0] == np.array(300).astype(dtype)
