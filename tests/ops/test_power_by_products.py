"""x ** n for a whole-number scalar n: products in float64 rounded once (backends/generic/math.py power),
not libm's pow, which is slow for negative bases and not always correctly rounded."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from helpers import SETTINGS

EXPONENTS = st.sampled_from([3, 4, 5, 7, 10, 64, -2, -3, -5, -64, 3.0, -2.0])
FLOATS32 = hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=2, max_side=5),
                      elements=st.floats(width=32, allow_nan=True, allow_infinity=True))


def exact(x: np.ndarray, p: float) -> np.ndarray:
    """x ** p in long double, rounded once to x's dtype (the reference a correctly rounded pow gives)."""
    with np.errstate(all="ignore"):
        return (x.astype(np.longdouble) ** int(p)).astype(x.dtype)


@SETTINGS
@given(x=FLOATS32, p=EXPONENTS)
def test_float32_is_correctly_rounded_special_values_included(x, p):
    y = (mt.tensor(x) ** p).numpy()
    ref = exact(x, p)
    assert y.dtype == np.float32 and y.shape == x.shape
    assert np.array_equal(y, ref, equal_nan=True)
    assert np.array_equal(np.signbit(y), np.signbit(ref))  # -0.0 and -inf kept


def test_float64_and_float16_within_a_few_ulps():
    x = np.linspace(-3, 3, 1001)
    for p in (3, -3, 4, -4, 17, -64):  # |p| > 4: NumPy's pow
        with np.errstate(all="ignore"):
            ref = (x.astype(np.longdouble) ** p).astype(np.float64)
        np.testing.assert_allclose((mt.tensor(x) ** p).numpy(), ref, rtol=3 * np.finfo(np.float64).eps)
    assert np.array_equal((mt.tensor(x) ** 3).numpy(), x * x * x)  # PyTorch's own x ** 3
    h = np.linspace(-2, 2, 41).astype(np.float16)
    assert np.array_equal((mt.tensor(h) ** 3).numpy(), exact(h, 3))


def test_other_exponents_and_integer_bases_keep_numpys_pow():
    x = np.array([-2, 3, 5], dtype=np.int64)
    assert (mt.tensor(x) ** 3).tolist() == [-8, 27, 125]
    f = np.array([0.5, 2.0], np.float32)
    assert np.array_equal((mt.tensor(f) ** 2.5).numpy(), np.power(f, np.float32(2.5)))
    assert (mt.tensor(f) ** 65).tolist() == np.power(f, np.float32(65)).tolist()


def test_gradient_of_a_cube_matches_three_x_squared():
    x = mt.tensor([-2.0, -0.5, 0.0, 1.5], dtype=mt.float64, requires_grad=True)
    (x ** 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([-2.0, -0.5, 0.0, 1.5]) ** 2, rtol=1e-15)


@pytest.mark.torch
def test_close_to_pytorch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-3, 3, 2001).astype(np.float32)
    for p in (3, 4, 5, -2, -3, 7):
        np.testing.assert_allclose((mt.tensor(x) ** p).numpy(), (torch.tensor(x) ** p).numpy(), rtol=3e-7)
