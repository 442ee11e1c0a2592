"""The added pointwise ops side by side with PyTorch (skipped where torch is absent): forward values, dtypes
and shapes, and the gradients of a weighted sum, on random inputs and on grids of corner values (zeros,
infinities, nans), in float32 and float64."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch
NAN, INF = math.nan, math.inf
CORNERS = [0.0, -0.0, 1.0, -1.0, 2.5, 1e-30, NAN, INF, -INF]


def run(lib, fn, arrays, dtype, grad):
    """fn(lib, *tensors) in ``dtype`` and, with ``grad``, the gradients of sum(out * w) (w fixed, random) with
    respect to each tensor (as NumPy arrays)."""
    inputs = [lib.tensor(np.asarray(a), dtype=getattr(lib, dtype), requires_grad=grad) for a in arrays]
    out = fn(lib, *inputs)
    values = out.detach().double().numpy()
    if not grad:
        return out, values, []
    w = np.random.default_rng(0).standard_normal(out.shape)
    (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
    return out, values, [np.zeros(np.shape(a)) if x.grad is None else x.grad.numpy() for a, x in zip(arrays, inputs)]


def compare(fn, *arrays, dtype="float64", grad=True, rtol=1e-6, atol=1e-7):
    """fn on minitensor and on torch agree: dtype, shape, values and gradients (nan matching nan)."""
    torch = pytest.importorskip("torch")
    got, got_values, got_grads = run(mt, fn, arrays, dtype, grad)
    want, want_values, want_grads = run(torch, fn, arrays, dtype, grad)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got_values.astype(np.float64), want_values.astype(np.float64), rtol=rtol, atol=atol)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def grid(*columns):
    """Every combination of the columns' values, as one array per column."""
    return [np.array(c) for c in zip(*itertools.product(*columns))]


def randn(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [1, 0.5, -3])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4), (3, 4)), ((2, 1, 4), (3, 1), (4,)), ((), (2, 3), (1, 3))])
def test_addcmul_addcdiv(dtype, value, shapes):
    a, b, c = (randn(k, *s) for k, s in enumerate(shapes))
    compare(lambda lib, x, y, z: lib.addcmul(x, y, z, value=value), a, b, c, dtype=dtype, rtol=1e-5)
    compare(lambda lib, x, y, z: lib.addcdiv(x, y, z, value=value), a, b, c, dtype=dtype, rtol=1e-5)
    compare(lambda lib, x, y, z: x.addcdiv(y, z, value=value), a, b, c + INF * (c > 1.5), dtype=dtype, rtol=1e-5)


@pytest.mark.parametrize("value", [1, 2, 0.5, True])
def test_addcmul_integers(value):
    a, b, c = (np.arange(6).reshape(2, 3) - k for k in range(3))
    compare(lambda lib, x, y, z: lib.addcmul(x, y, z, value=value), a, b, c, dtype="int64", grad=False)
    compare(lambda lib, x, y, z: lib.addcmul(x.float(), y, z, value=value), a, b, c, dtype="int64", grad=False)
    compare(lambda lib, x, y, z: lib.addcdiv(x, y.float(), z, value=value), a, b, c + 7, dtype="int64", grad=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, True), (1, False), ((0, 2), False), (-1, True)])
def test_nansum_nanmean(dtype, dim, keepdim):
    x = randn(1, 3, 4, 2)
    x[np.random.default_rng(2).random(x.shape) < 0.4] = NAN
    x[2] = NAN  # an all-nan slice for dims that do not span dim 0
    compare(lambda lib, t: lib.nansum(t, dim, keepdim), x, dtype=dtype, rtol=1e-5)
    compare(lambda lib, t: t.nanmean(dim, keepdim), x, dtype=dtype, rtol=1e-5)
    compare(lambda lib, t: lib.nansum(t, dim, keepdim, dtype=lib.float64), x, dtype=dtype, rtol=1e-5)
    compare(lambda lib, t: lib.nansum(t, dim, keepdim) * INF, x, dtype=dtype)  # inf * 0 at the nans


def test_nansum_integers():
    x = np.array([[1, -2, 3], [4, 5, 6]])
    for dim in (None, 1):
        compare(lambda lib, t: lib.nansum(t, dim), x, dtype="int64", grad=False)
        compare(lambda lib, t: lib.nansum(t, dim, dtype=lib.float32), x, dtype="int32", grad=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_xlogy_on_a_grid_of_corners(dtype):
    a, b = grid(CORNERS, CORNERS)
    compare(lambda lib, x, y: lib.xlogy(x, y), a, b, dtype=dtype)
    for y in CORNERS:  # a Python number on either side
        compare(lambda lib, x: lib.xlogy(x, y), np.array(CORNERS), dtype=dtype)
        compare(lambda lib, x: lib.xlogy(y, x), np.array(CORNERS), dtype=dtype)
    compare(lambda lib, x, y: lib.xlogy(x, y), randn(0, 3, 1), np.abs(randn(1, 4)), dtype=dtype)


@pytest.mark.parametrize("eps", [None, 0.1, 0.05, 1e-6, -1.0, 0.7])
def test_logit(eps):
    # not -0.0: PyTorch's gradient there is +-inf by whether its vectorised loop or its scalar tail ran
    x = np.array([c for c in CORNERS if math.copysign(1, c) > 0 or c != 0] + [0.05, 0.95, 0.3, 0.7, 0.1, 0.9, 1 - 1e-6])
    for dtype in ("float32", "float64"):
        compare(lambda lib, t: lib.logit(t, eps), x, dtype=dtype, rtol=2e-6)


def test_clamp_min_max():
    a, b = grid(CORNERS[:6] + [NAN, INF], CORNERS[:6] + [NAN, -INF])
    for name in ("clamp_min", "clamp_max"):
        compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)
        compare(lambda lib, x, y: getattr(x, name)(y[:1]), a, b)
        for bound in (0.0, 1, -2.5):
            compare(lambda lib, x: getattr(lib, name)(x, bound), a)
    compare(lambda lib, x, y: lib.clamp(x, min=y), a, b)  # the tensor path of clamp takes the same rules
    compare(lambda lib, x, y: lib.clamp(x, max=y), a, b)


@pytest.mark.parametrize("n, dim, edges", [(1, -1, ""), (2, 0, "p"), (3, 1, "pa"), (1, 1, "a"), (6, -1, "pa")])
def test_diff(n, dim, edges):
    x = randn(0, 3, 4)
    extra = tuple(2 if k == dim % 2 else s for k, s in enumerate(x.shape))
    pre, app = randn(1, *extra), randn(2, *extra)
    compare(lambda lib, t, p, q: lib.diff(t, n, dim, p if "p" in edges else None, q if "a" in edges else None),
            x, pre, app)
    compare(lambda lib, t: (t > 0).diff(n, dim), x, grad=False)
    compare(lambda lib, t: t.long().diff(n, dim), 5 * x, grad=False)


def test_float_power_heaviside_sinc_nan_to_num():
    a, b = grid([0.0, 0.5, 2.0, -3.0, INF, NAN], [0.0, 2.0, -1.5, 0.5, 3.0])
    compare(lambda lib, x, y: lib.float_power(x, y), a, b, dtype="float32")
    compare(lambda lib, x: lib.float_power(2, x), b, dtype="float32")
    compare(lambda lib, x: lib.float_power(x, 3), a, dtype="int64", grad=False)
    compare(lambda lib, x, y: lib.heaviside(x, y), a, b, grad=False)
    x = np.array(CORNERS + [0.5, -2.5, 1e-20, 7.25])
    for dtype in ("float32", "float64"):
        compare(lambda lib, t: lib.sinc(t), x, dtype=dtype)
        compare(lambda lib, t: lib.nan_to_num(t), x, dtype=dtype)
        compare(lambda lib, t: t.nan_to_num(nan=1.5, posinf=-2.0), x, dtype=dtype)
    for dtype in ("float16", "bfloat16"):
        compare(lambda lib, t: lib.nan_to_num(t, neginf=1e10), x, dtype=dtype, grad=False)
    compare(lambda lib, t: lib.nan_to_num(t), np.array([1, 2]), dtype="int64", grad=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_and_bessel_functions(dtype):
    x = np.concatenate([np.linspace(-4.7, -0.3, 12) + 0.013, np.linspace(0.05, 14, 15)])
    for name in ("lgamma", "digamma", "i0"):
        compare(lambda lib, t: getattr(lib, name)(t), x, dtype=dtype, rtol=2e-5, atol=1e-5)
    for n in (0, 1, 2, 3):
        compare(lambda lib, t: lib.polygamma(n, t), x, dtype=dtype, rtol=2e-5, atol=1e-5)
    # the corners where both agree: the poles and infinities of lgamma, digamma and i0
    corners = np.array(CORNERS + [-2.0, -3.0])
    for name in ("lgamma", "digamma", "i0"):
        compare(lambda lib, t: getattr(lib, name)(t), corners, dtype=dtype, grad=name != "digamma")


def test_in_place_forms():
    x = randn(0, 2, 3)
    compare(lambda lib, t: t.clone().addcmul_(t, t[0], value=0.5), x)
    compare(lambda lib, t: t.clone().addcdiv_(t, t[0] + 3), x)
    compare(lambda lib, t: t.clone().xlogy_(t.abs()), x)
    compare(lambda lib, t: (t.sigmoid() * 1).logit_(0.2), x)
    compare(lambda lib, t: t.clone().clamp_min_(0.1).clamp_max_(t[1]), x)
    compare(lambda lib, t: (t * INF).nan_to_num_(), x)
    compare(lambda lib, t: t.abs().lgamma_().digamma_().polygamma_(1), x + 2, rtol=1e-5)
    compare(lambda lib, t: t.clone().i0_().sinc_(), x)
    compare(lambda lib, t: t.clone().float_power_(2), x)
