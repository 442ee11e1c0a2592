"""Elementwise math: forward vs NumPy float64, gradients by gradcheck away from kinks and poles."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, FEW, assert_close, away_from, broadcast_pairs, check_grad, randn, seeds, shapes, t64


def positive(x):
    return np.abs(x) + 0.2


def no_kink(x):
    return away_from(x, (0.0,), 0.05)


def inside_unit(x):
    return 0.9 * np.tanh(x)


def erfinv_by_bisection(x):
    """erfinv's reference: the root of erf(y) = x by bisection on [-6, 6] (erf from Python's math)."""
    lo, hi = np.full_like(x, -6.0), np.full_like(x, 6.0)
    erf = np.vectorize(math.erf, otypes=[float])
    for _ in range(60):
        mid = (lo + hi) / 2
        below = erf(mid) < x
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


# name -> (minitensor function, NumPy reference, domain map applied to N(0, 1) samples)
UNARY = {
    "exp": (mt.exp, np.exp, lambda x: x),
    "log": (mt.log, np.log, positive),
    "log2": (mt.log2, np.log2, positive),
    "log10": (mt.log10, np.log10, positive),
    "log1p": (mt.log1p, np.log1p, lambda x: np.abs(x) - 0.5),
    "expm1": (mt.expm1, np.expm1, lambda x: x),
    "sqrt": (mt.sqrt, np.sqrt, positive),
    "rsqrt": (mt.rsqrt, lambda x: 1 / np.sqrt(x), positive),
    "abs": (mt.abs, np.abs, no_kink),
    "sin": (mt.sin, np.sin, lambda x: x),
    "cos": (mt.cos, np.cos, lambda x: x),
    "tanh": (mt.tanh, np.tanh, lambda x: x),
    "sigmoid": (mt.sigmoid, lambda x: 1 / (1 + np.exp(-x)), lambda x: x),
    "relu": (mt.relu, lambda x: np.maximum(x, 0), no_kink),
    "reciprocal": (mt.reciprocal, lambda x: 1 / x, lambda x: away_from(x, (0.0,), 0.3)),
    "square": (mt.square, np.square, lambda x: x),
    "neg": (mt.neg, np.negative, lambda x: x),
    "tan": (mt.tan, np.tan, np.tanh),
    "asin": (mt.asin, np.arcsin, inside_unit),
    "acos": (mt.acos, np.arccos, inside_unit),
    "atan": (mt.atan, np.arctan, lambda x: x),
    "sinh": (mt.sinh, np.sinh, lambda x: x),
    "cosh": (mt.cosh, np.cosh, lambda x: x),
    "asinh": (mt.asinh, np.arcsinh, lambda x: x),
    "acosh": (mt.acosh, np.arccosh, lambda x: np.abs(x) + 1.2),
    "atanh": (mt.atanh, np.arctanh, inside_unit),
    "exp2": (mt.exp2, np.exp2, lambda x: x),
    "erf": (mt.erf, np.vectorize(math.erf, otypes=[float]), lambda x: x),
    "erfc": (mt.erfc, np.vectorize(math.erfc, otypes=[float]), lambda x: x),
    "erfinv": (mt.erfinv, lambda x: erfinv_by_bisection(x), inside_unit),
    "frac": (mt.frac, lambda x: x - np.trunc(x), lambda x: away_from(x, (-2.0, -1.0, 0.0, 1.0, 2.0), 0.05)),
}


@SETTINGS
@given(shape=shapes, seed=seeds, name=st.sampled_from(sorted(UNARY)))
def test_unary_forward_and_grad(shape, seed, name):
    fn, ref, domain = UNARY[name]
    x = domain(randn(seed, shape))
    out = fn(t64(x, False))
    assert out.dtype is mt.float64 and out.shape == x.shape
    assert_close(out, ref(x), rtol=1e-12, atol=1e-14)
    check_grad(fn, x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32_stays_float32_and_matches(name):
    fn, ref, domain = UNARY[name]
    x = domain(randn(3, (4, 5)))
    out = fn(mt.tensor(x, dtype=mt.float32))
    assert out.dtype is mt.float32
    assert_close(out, ref(x.astype(np.float32).astype(np.float64)), rtol=2e-6, atol=1e-6)
    m = getattr(mt.tensor(x, dtype=mt.float32), name)() if hasattr(mt.Tensor, name) else out
    assert_close(m, out.numpy())


def test_stability_at_extremes():
    x = mt.tensor([-1000.0, 0.0, 1000.0])
    assert_close(mt.sigmoid(x), [0.0, 0.5, 1.0])
    assert_close(mt.tanh(x), [-1.0, 0.0, 1.0])
    assert_close(mt.log1p(mt.tensor([1e-10], dtype=mt.float64)), [1e-10], rtol=1e-12)
    assert_close(mt.expm1(mt.tensor([1e-10], dtype=mt.float64)), [1e-10], rtol=1e-12)


def test_relu_and_abs_gradients_at_zero_match_pytorch():
    x = mt.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    mt.relu(x).sum().backward()
    assert_close(x.grad, [0.0, 0.0, 1.0])
    x.grad = None
    x.abs().sum().backward()
    assert_close(x.grad, [-1.0, 0.0, 1.0])


def test_piecewise_constant_ops():
    a = np.array([-2.5, -1.5, -0.4, 0.0, 0.5, 1.5, 2.5, 3.7])
    x = mt.tensor(a, requires_grad=True)
    for fn, ref in ((mt.sign, np.sign), (mt.floor, np.floor), (mt.ceil, np.ceil), (mt.round, np.round)):
        out = fn(x)
        assert_close(out, ref(a))
        x.grad = None
        out.sum().backward()  # PyTorch's zero gradient, not "does not require grad"
        assert x.grad is not None and x.grad.tolist() == [0.0] * len(a)
    assert_close(mt.round(x, decimals=1), np.round(a, 1))
    assert mt.round(mt.tensor([0.5, 1.5, 2.5])).tolist() == [0.0, 2.0, 2.0]  # half to even
    assert mt.sign(mt.tensor([-3, 0, 4])).tolist() == [-1, 0, 1]
    assert mt.abs(mt.tensor([-3, 4])).tolist() == [3, 4] and mt.abs(mt.tensor([-3])).dtype is mt.int64


@SETTINGS
@given(shape=shapes, seed=seeds, lo=st.sampled_from([None, -0.5, 0.0]), hi=st.sampled_from([None, 0.5, 1.0]))
def test_clamp_scalar_bounds(shape, seed, lo, hi):
    if lo is None and hi is None:
        lo = -1.0
    x = away_from(randn(seed, shape), tuple(b for b in (lo, hi) if b is not None), 0.02)
    assert_close(mt.clamp(t64(x, False), lo, hi), np.clip(x, lo, hi))
    check_grad(lambda t: t.clamp(lo, hi), x)
    check_grad(lambda t: mt.clip(t, min=lo, max=hi), x)


def test_clamp_gradient_passes_at_the_bounds():
    x = mt.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    x.clamp(0.0, 1.0).sum().backward()
    assert_close(x.grad, [0.0, 1.0, 1.0, 1.0, 0.0])  # PyTorch: min <= x <= max passes the gradient


def test_clamp_integers_and_errors():
    assert mt.clamp(mt.tensor([-5, 0, 5]), -1, 1).tolist() == [-1, 0, 1]
    assert mt.clamp(mt.tensor([-5, 0, 5]), -1, 1).dtype is mt.int64
    assert mt.clamp(mt.tensor([-5, 0, 5]), min=0.5).dtype is mt.float32
    with pytest.raises(RuntimeError, match="min.*max"):
        mt.clamp(mt.ones(2))


def test_clamp_tensor_bounds_get_gradients():
    x, lo, hi = randn(0, (3, 4)), randn(1, (4,)) - 0.5, randn(2, (3, 1)) + 0.5
    x = np.where(np.abs(x - lo) < 0.05, x + 0.2, x)
    x = np.where(np.abs(x - hi) < 0.05, x + 0.2, x)
    lo, hi = np.broadcast_to(lo, (3, 4)).copy(), np.broadcast_to(hi, (3, 4)).copy()
    assert_close(mt.clamp(t64(x, False), t64(lo, False), t64(hi, False)), np.minimum(np.maximum(x, lo), hi))
    check_grad(lambda a, b, c: mt.clamp(a, b, c), x, lo, hi)


@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, op=st.sampled_from(["maximum", "minimum"]))
def test_maximum_minimum(shapes, seed, op):
    (sa, sb), _ = shapes
    a, b = randn(seed, sa), randn(seed + 1, sb)
    a = np.where(np.abs(a - b) < 0.05, a + 0.2, a) if a.shape == np.broadcast_shapes(sa, sb) else a
    fn, ref = getattr(mt, op), getattr(np, op)
    assert_close(fn(t64(a, False), t64(b, False)), ref(a, b))
    if np.all(np.abs(np.subtract(a, b)) > 0.01):
        check_grad(fn, a, b)


def test_maximum_ties_split_the_gradient():
    a = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mt.tensor([2.0, 2.0, 2.0], requires_grad=True)
    mt.maximum(a, b).sum().backward()
    assert_close(a.grad, [0.0, 0.5, 1.0])
    assert_close(b.grad, [1.0, 0.5, 0.0])


def test_maximum_with_scalar():
    x = mt.tensor([-1.0, 3.0], requires_grad=True)
    out = mt.maximum(x, mt.tensor(0.0))
    assert_close(out, [0.0, 3.0])
    out.sum().backward()
    assert_close(x.grad, [0.0, 1.0])


@FEW
@given(shape=shapes, seed=seeds)
def test_composite_expression(shape, seed):
    x = randn(seed, shape)
    fn = lambda t: (t.sin() * t.exp() + (t * t + 1).log() - t.tanh().sigmoid()).cos()  # noqa: E731
    ref = np.cos(np.sin(x) * np.exp(x) + np.log(x * x + 1) - 1 / (1 + np.exp(-np.tanh(x))))
    assert_close(fn(t64(x, False)), ref, rtol=1e-10)
    check_grad(fn, x)


def test_log_and_sqrt_domain_edges():
    with np.errstate(divide="ignore", invalid="ignore"):
        assert mt.log(mt.tensor([0.0])).item() == -np.inf
        assert np.isnan(mt.log(mt.tensor([-1.0])).item())
        assert np.isnan(mt.sqrt(mt.tensor([-1.0])).item())
    assert mt.sqrt(mt.tensor([0.0])).item() == 0.0
