"""The smaller pointwise ops added for PyTorch programs: deg2rad / rad2deg, fmax / fmin, gcd / lcm, ldexp /
frexp, nextafter, isposinf / isneginf / isreal, igamma / igammac, mvlgamma and renorm, against NumPy and
SciPy float64 references over broadcast shapes, gradients by gradcheck, and PyTorch's dtypes and errors.
PyTorch side by side: test_aliases_torch.py."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.testing import gradcheck

from helpers import SETTINGS, assert_close, broadcast_pairs, randn, seeds, t64

NAN, INF = math.nan, math.inf
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, NAN, INF, -INF, 2.5])


def with_specials(a: np.ndarray, seed: int) -> np.ndarray:
    """a with some elements replaced by nan, +-inf, +-0 and ties."""
    rng = np.random.default_rng(seed)
    out = np.array(a, dtype=np.float64)
    mask = rng.random(a.shape) < 0.4
    out[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return out


# -------------------------------------------------------------------------------------- angles
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), seed=seeds)
def test_deg2rad_rad2deg(shape, seed):
    a = randn(seed, shape) * 200
    assert_close(mt.deg2rad(t64(a, False)), a * np.pi / 180, rtol=1e-14)
    assert_close(mt.rad2deg(t64(a, False)), a * 180 / np.pi, rtol=1e-14)
    assert gradcheck(lambda x: mt.rad2deg(mt.deg2rad(x) ** 2), (t64(a),))


def test_angle_dtypes():
    assert mt.deg2rad(mt.tensor([180])).dtype is mt.float32 and mt.rad2deg(mt.tensor([True])).dtype is mt.float32
    assert mt.deg2rad(mt.tensor([180.0], dtype=mt.float16)).dtype is mt.float16


# ------------------------------------------------------------------------------------ fmax, fmin
@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds)
def test_fmax_fmin_ignore_nan(shapes, seed):
    (sa, sb), out_shape = shapes
    a, b = with_specials(randn(seed, sa), seed), with_specials(randn(seed + 1, sb), seed + 1)
    for fn, ref in ((mt.fmax, np.fmax), (mt.fmin, np.fmin)):
        out = fn(t64(a, False), t64(b, False))
        assert out.shape == out_shape
        np.testing.assert_array_equal(out.numpy(), ref(a, b))


def test_fmax_fmin_gradients_go_to_input_on_ties_and_past_nan():
    a, b = [1.0, NAN, 2.0, NAN, 3.0, 0.5], [1.0, 2.0, NAN, NAN, -1.0, 4.0]
    for fn, first in ((mt.fmax, [1, 0, 1, 1, 1, 0]), (mt.fmin, [1, 0, 1, 1, 0, 1])):
        x, y = mt.tensor(a, dtype=mt.float64, requires_grad=True), mt.tensor(b, dtype=mt.float64, requires_grad=True)
        fn(x, y).sum().backward()
        assert x.grad.tolist() == first and y.grad.tolist() == [1 - f for f in first]
    ok = np.array([0.3, -1.2, 2.0])
    assert gradcheck(mt.fmax, (t64(ok), t64(np.array([0.5, -1.7, 1.0]))))
    assert mt.fmax(mt.tensor([1, 5]), mt.tensor([2.5, 1.0])).dtype is mt.float32
    assert mt.fmin(mt.tensor([True, False]), mt.tensor([False, False])).tolist() == [False, False]


# --------------------------------------------------------------------------------------- gcd, lcm
ints = hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), elements=st.integers(-500, 500))


@SETTINGS
@given(a=ints, b=ints)
def test_gcd_lcm_match_numpy(a, b):
    try:
        ref_g, ref_l = np.gcd(a, b), np.lcm(a, b)
    except ValueError:  # shapes that do not broadcast
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            mt.gcd(mt.tensor(a), mt.tensor(b))
        return
    assert mt.gcd(mt.tensor(a), mt.tensor(b)).tolist() == ref_g.tolist()
    assert mt.tensor(a).lcm(mt.tensor(b)).tolist() == ref_l.tolist()


def test_gcd_lcm_dtypes_in_place_and_errors():
    g = mt.gcd(mt.tensor([12, 18]), mt.tensor([8, 27], dtype=mt.int32))
    assert g.dtype is mt.int64 and g.tolist() == [4, 9]
    x = mt.tensor([4, 6], dtype=mt.int16)
    assert x.lcm_(mt.tensor([6, 4], dtype=mt.int16)) is x and x.tolist() == [12, 12] and x.dtype is mt.int16
    assert mt.gcd_(x, mt.tensor([8, 18], dtype=mt.int16)).tolist() == [4, 6]
    for bad in (mt.tensor([1.0]), mt.tensor([True])):
        with pytest.raises(NotImplementedError, match="not implemented for"):
            mt.gcd(bad, bad)


# ------------------------------------------------------------------------------------ ldexp, frexp
@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds)
def test_ldexp(shapes, seed):
    (sa, sb), _ = shapes
    a, e = randn(seed, sa), np.random.default_rng(seed).integers(-5, 6, sb)
    assert_close(mt.ldexp(t64(a, False), t64(e.astype(np.float64), False)), np.ldexp(a, e), rtol=0, atol=0)
    assert gradcheck(mt.ldexp, (t64(a), t64(e.astype(np.float64))))  # in both, as input * 2^other


def test_ldexp_dtypes():
    assert mt.ldexp(mt.tensor([1, 2]), mt.tensor([3, 1])).tolist() == [8.0, 4.0]
    assert mt.ldexp(mt.tensor([1, 2]), mt.tensor([3, 1])).dtype is mt.float32
    x = mt.tensor([1.0, 3.0])
    assert mt.ldexp_(x, mt.tensor([2, -1])) is x and x.tolist() == [4.0, 1.5]


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), seed=seeds,
       dtype=st.sampled_from([mt.float64, mt.float32, mt.float16]))
def test_frexp(shape, seed, dtype):
    a = with_specials(randn(seed, shape) * 1e3, seed)
    x = mt.tensor(a, dtype=dtype)
    m, e = mt.frexp(x)
    ref_m, ref_e = np.frexp(x.numpy())
    assert m.dtype is dtype and e.dtype is mt.int32 and m.shape == x.shape
    np.testing.assert_array_equal(m.numpy(), ref_m)
    np.testing.assert_array_equal(e.numpy(), ref_e)
    np.testing.assert_array_equal(x.frexp().mantissa.numpy(), m.numpy())


def test_frexp_gradient_and_errors():
    x = t64(np.array([0.3, -7.0, 1000.0, 5e-3]))
    assert gradcheck(lambda t: mt.frexp(t).mantissa, (x,))
    assert not mt.frexp(x).exponent.requires_grad
    with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
        mt.frexp(mt.tensor([1, 2]))


# -------------------------------------------------------------------------------------- nextafter
@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, dtype=st.sampled_from([mt.float64, mt.float32]))
def test_nextafter(shapes, seed, dtype):
    (sa, sb), _ = shapes
    a, b = (with_specials(randn(s, sh), s) for s, sh in ((seed, sa), (seed + 1, sb)))
    x, y = mt.tensor(a, dtype=dtype), mt.tensor(b, dtype=dtype)
    out = mt.nextafter(x, y)
    assert out.dtype is dtype
    np.testing.assert_array_equal(out.numpy(), np.nextafter(x.numpy(), y.numpy()))


def test_nextafter_errors_and_in_place():
    assert mt.nextafter(mt.tensor([1.0]), mt.tensor([2.0], dtype=mt.float64)).dtype is mt.float64
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        mt.nextafter(mt.tensor([1]), mt.tensor([2]))
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.nextafter(mt.tensor([1.0]), 2.0)
    x = mt.tensor([1.0], dtype=mt.float64)
    assert x.nextafter_(mt.tensor([2.0], dtype=mt.float64)) is x and x.item() == 1 + 2.0 ** -52


# ------------------------------------------------------------------------------------ classifiers
def test_isposinf_isneginf_isreal():
    x = mt.tensor([INF, -INF, NAN, 0.0, 1e308], dtype=mt.float64)
    assert mt.isposinf(x).tolist() == [True, False, False, False, False]
    assert x.isneginf().tolist() == [False, True, False, False, False]
    assert mt.isreal(x).tolist() == [True] * 5 and x.isreal().dtype is mt.bool
    for t in (mt.tensor([1, 2]), mt.tensor([True, False])):
        assert mt.isposinf(t).tolist() == [False, False] and mt.isneginf(t).dtype is mt.bool


# ------------------------------------------------------------------------------ igamma, igammac
@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds)
def test_igamma_igammac_match_scipy(shapes, seed):
    (sa, sb), out_shape = shapes
    a, x = np.abs(randn(seed, sa)) * 3 + 0.05, np.abs(randn(seed + 1, sb)) * 3
    for fn, ref in ((mt.igamma, scipy.special.gammainc), (mt.igammac, scipy.special.gammaincc)):
        out = fn(t64(a, False), t64(x, False))
        assert out.shape == out_shape
        assert_close(out, ref(a, x), rtol=1e-12, atol=1e-14)
    xs = t64(x + 0.1)
    assert gradcheck(lambda t: mt.igamma(t64(a, False), t), (xs,))
    assert gradcheck(lambda t: mt.igammac(t64(a, False), t), (xs,))


def test_special_names():
    from minitensor import special
    assert special.gammainc is mt.igamma and special.gammaincc is mt.igammac and special.multigammaln is mt.mvlgamma


def test_igamma_gradient_only_along_x_and_dtypes():
    a = mt.tensor([1.0, 2.0], requires_grad=True)
    y = mt.igamma(a, mt.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="derivative for 'igamma: input' is not implemented"):
        y.sum().backward()
    assert mt.igamma(mt.tensor([1, 2]), mt.tensor([1.0, 2.0])).dtype is mt.float32
    assert mt.igamma(mt.tensor([1.0]), mt.tensor([1.0], dtype=mt.float64)).dtype is mt.float64
    x = mt.tensor([1.0, 2.0])
    assert x.igammac_(mt.tensor([1.0, 1.0])) is x
    assert_close(x, scipy.special.gammaincc([1.0, 2.0], 1.0), rtol=1e-6)
    assert np.isnan(mt.igamma(mt.tensor([-1.0]), mt.tensor([1.0])).item())


# ----------------------------------------------------------------------------------------- mvlgamma
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), seed=seeds, p=st.integers(1, 5))
def test_mvlgamma_matches_scipy(shape, seed, p):
    a = np.abs(randn(seed, shape)) * 3 + (p - 1) / 2 + 0.1
    out = mt.mvlgamma(t64(a, False), p)
    assert out.shape == a.shape
    assert_close(out, scipy.special.multigammaln(a, p) if a.ndim else scipy.special.multigammaln(a.item(), p),
                 rtol=1e-12)
    assert gradcheck(lambda t: mt.mvlgamma(t, p), (t64(a),))


def test_mvlgamma_dtypes_errors_in_place():
    assert mt.mvlgamma(mt.tensor([3, 4]), 2).dtype is mt.float32
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        mt.mvlgamma(mt.tensor([3.0]), 0)
    x = mt.tensor([3.0, 4.0])
    assert x.mvlgamma_(p=2) is x
    assert_close(x, scipy.special.multigammaln(np.array([3.0, 4.0]), 2), rtol=1e-6)


# -------------------------------------------------------------------------------------------- renorm
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=3, max_side=4), seed=seeds, p=st.sampled_from([1, 2, 3.5, INF]),
       maxnorm=st.sampled_from([0.0, 0.5, 2.0, 100.0]), data=st.data())
def test_renorm(shape, seed, p, maxnorm, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = randn(seed, shape)
    keep = [a.shape[d] if d == dim % a.ndim else 1 for d in range(a.ndim)]
    norms = np.linalg.norm(np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1), ord=p, axis=1).reshape(keep)
    ref = a * np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    assert_close(mt.renorm(t64(a, False), p, dim, maxnorm), ref, rtol=1e-12, atol=1e-14)
    if p != INF:
        assert gradcheck(lambda t: t.renorm(p, dim, maxnorm), (t64(a),))


def test_renorm_errors_and_in_place():
    x = mt.ones(2, 3)
    for args, match in (((2, 0, -1.0), "expected maxnorm to be >= 0"), ((0, 0, 1.0), "non-positive-norm"),
                        ((-1, 0, 1.0), "non-positive-norm")):
        with pytest.raises(RuntimeError, match=match):
            mt.renorm(x, *args)
    with pytest.raises(RuntimeError, match="needs at least 2 dimensions"):
        mt.renorm(mt.ones(3), 2, 0, 1.0)
    view, version = x[0], x._version
    assert x.renorm_(2, 0, 1.0) is x and x._version == version + 1
    assert_close(view, np.full(3, 1 / math.sqrt(3)), rtol=1e-6)
