"""The pointwise ops, reductions and special functions added for PyTorch programs (addcmul, addcdiv, nansum,
nanmean, xlogy, logit, clamp_min/max, diff, float_power, heaviside, sinc, nan_to_num, lgamma, digamma,
polygamma, i0...): NumPy float64 references over broadcast shapes, gradients by gradcheck, PyTorch's corner
values, dtypes and errors. The side-by-side runs against PyTorch itself are in test_pointwise_added_torch.py."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import FEW, SETTINGS, assert_close, away_from, broadcast_pairs, check_grad, nonscalar_shapes, randn, \
    seeds, t64

NAN, INF = math.nan, math.inf
broadcast_triples = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3)


def grads(fn, *values):
    """fn's output and the gradients of its sum with respect to each (float64) input, as lists."""
    xs = [mt.tensor(v, dtype=mt.float64, requires_grad=True) for v in values]
    out = fn(*xs)
    out.sum().backward()
    return [out.tolist()] + [x.grad.tolist() for x in xs]


def same(got, expected):
    """Equal element by element, nan matching nan and the sign of zero ignored."""
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64))


# ---------------------------------------------------------------------------------------- addcmul, addcdiv
@SETTINGS
@given(shapes=broadcast_triples, seed=seeds, value=st.sampled_from([1, 0.5, -2]), div=st.booleans())
def test_addcmul_addcdiv_broadcast(shapes, seed, value, div):
    (sa, sb, sc), out_shape = shapes
    a, b = randn(seed, sa), randn(seed + 1, sb)
    c = away_from(randn(seed + 2, sc), (0.0,), 0.3) if div else randn(seed + 2, sc)
    fn, ref = (mt.addcdiv, a + value * b / c) if div else (mt.addcmul, a + value * b * c)
    out = fn(t64(a, False), t64(b, False), t64(c, False), value=value)
    assert out.shape == out_shape and out.dtype is mt.float64
    assert_close(out, ref, rtol=1e-12, atol=1e-14)
    assert_close(getattr(t64(a, False), fn.__name__)(t64(b, False), t64(c, False), value=value), ref, rtol=1e-12)
    check_grad(lambda x, y, z: fn(x, y, z, value=value), a, b, c)


def test_addcmul_in_place_follows_the_in_place_rules():
    x = mt.ones(2, 3)
    view, version = x[0], x._version
    assert x.addcmul_(mt.full((3,), 2.0), mt.full((2, 1), 3.0), value=0.5) is x
    assert x.tolist() == [[4.0] * 3] * 2 and view.tolist() == [4.0] * 3 and x._version == version + 1
    assert x.addcdiv_(mt.ones(3), mt.full((3,), 4.0), value=-2).tolist() == [[3.5] * 3] * 2
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        mt.ones(3).addcmul_(mt.ones(3), mt.ones(2, 3))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        mt.tensor([1, 2]).addcmul_(mt.ones(2), mt.ones(2))
    leaf = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.addcmul_(mt.ones(2), mt.ones(2))
    y = leaf * 1
    y.addcmul_(leaf, mt.full((2,), 3.0))  # y = leaf + 3 leaf
    y.sum().backward()
    assert leaf.grad.tolist() == [4.0, 4.0]


def test_addcmul_addcdiv_dtypes_and_errors():
    i, f = mt.tensor([1, 2, 3]), mt.tensor([1.0, 2.0, 3.0])
    assert mt.addcmul(i, i, i, value=2).tolist() == [3, 10, 21] and mt.addcmul(i, i, i).dtype is mt.int64
    assert mt.addcmul(i, i, i, value=0.5).tolist() == [1, 2, 3]  # an integer result truncates value, as PyTorch
    assert mt.addcmul(f, i, i, value=0.5).tolist() == [1.5, 4.0, 7.5]
    assert mt.addcmul(mt.tensor(1.0, dtype=mt.float64), i, i).dtype is mt.float64  # a 0-d float outranks ints
    assert mt.addcmul(f.half(), f.double(), mt.tensor(2.0, dtype=mt.float64)).dtype is mt.float64
    assert mt.addcmul(f.bfloat16(), f.bfloat16(), f.bfloat16(), value=0.5).dtype is mt.bfloat16
    assert mt.addcdiv(i, f, i).tolist() == [2.0, 3.0, 4.0] and mt.addcdiv(i, i, f, value=2).dtype is mt.float32
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        mt.addcdiv(f, i, i)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        mt.addcdiv(f, mt.tensor([True]), mt.tensor([True]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        mt.addcmul(*[mt.tensor([True])] * 3)
    with pytest.raises(TypeError, match="argument 'tensor1' \\(position 2\\) must be Tensor, not float"):
        mt.addcmul(f, 2.0, f)
    with pytest.raises(TypeError):
        mt.addcmul(f, f, f, 2)  # value is keyword-only
    with pytest.raises(RuntimeError):
        mt.addcmul(f, f, mt.ones(2))


# ------------------------------------------------------------------------------------------ nansum, nanmean
@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, keepdim=st.booleans(), data=st.data())
def test_nansum_nanmean_match_numpy(shape, seed, keepdim, data):
    x = randn(seed, shape)
    x[np.random.default_rng(seed).random(shape) < 0.3] = NAN
    dim = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1), label="dim")
    axis = None if dim is None else dim % len(shape)
    with warnings.catch_warnings():  # NumPy warns of an all-nan slice ("Mean of empty slice")
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_ref = np.nanmean(x, axis=axis, keepdims=keepdim)
    assert_close(mt.nansum(t64(x, False), dim, keepdim), np.nansum(x, axis=axis, keepdims=keepdim), rtol=1e-12)
    same(np.round(mt.nanmean(t64(x, False), dim, keepdim).numpy(), 12), np.round(mean_ref, 12))
    assert_close(t64(x, False).nansum(dim, keepdim), np.nansum(x, axis=axis, keepdims=keepdim), rtol=1e-12)
    check_grad(lambda t: t.nansum(dim, keepdim), x)
    if not np.isnan(mean_ref).any():  # finite differences need a finite output
        check_grad(lambda t: t.nanmean(dim, keepdim), x)


def test_nan_entries_get_a_zero_gradient_as_pytorch():
    x = mt.tensor([[1.0, NAN], [NAN, NAN]], requires_grad=True)
    mt.nansum(x, 1).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [0.0, 0.0]]
    x.grad = None
    (mt.nansum(x, 1) * mt.tensor([INF, 1.0])).sum().backward()  # inf * 0 at a nan entry is nan, as PyTorch
    same(x.grad.tolist(), [[INF, NAN], [0.0, 0.0]])
    x.grad = None
    y = mt.nanmean(x, 1)
    same(y.tolist(), [1.0, NAN])  # an all-nan slice has no mean
    y.sum().backward()
    same(x.grad.tolist(), [[1.0, 0.0], [NAN, NAN]])  # PyTorch: its gradient is 0 * inf


def test_nansum_nanmean_dtypes():
    i = mt.tensor([1, 2, 3])
    assert mt.nansum(i).item() == 6 and mt.nansum(i).dtype is mt.int64
    assert mt.nansum(mt.tensor([True, True])).item() == 2
    assert mt.nansum(i, dtype=mt.float32).dtype is mt.float32
    f = mt.tensor([1.0, NAN, 5.0])
    assert mt.nansum(f.half()).dtype is mt.float16 and mt.nansum(f, dtype=mt.float64).item() == 6.0
    assert mt.nanmean(f.half(), dtype=mt.float32).dtype is mt.float32 and mt.nanmean(f).item() == 3.0
    assert mt.nansum(f.bfloat16()).dtype is mt.bfloat16 and mt.nansum(f.bfloat16()).item() == 6.0
    assert mt.nansum(mt.tensor([1.0, 2.0]), dtype=mt.int64).item() == 3 and mt.nansum(f, axis=0).item() == 6.0
    assert mt.nansum(mt.empty(0)).item() == 0.0 and math.isnan(mt.nanmean(mt.empty(0)).item())
    for dtype in (None, mt.float32):
        with pytest.raises(RuntimeError, match="expected input to have floating point or complex dtype but got Long"):
            mt.nanmean(i, dtype=dtype)
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.nansum([1.0, 2.0])


# -------------------------------------------------------------------------------------------------- xlogy
@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds)
def test_xlogy_forward_and_grad(shapes, seed):
    (sa, sb), out_shape = shapes
    a, b = randn(seed, sa), np.abs(randn(seed + 1, sb)) + 0.2
    out = mt.xlogy(t64(a, False), t64(b, False))
    assert out.shape == out_shape
    assert_close(out, a * np.log(b), rtol=1e-12, atol=1e-15)
    check_grad(mt.xlogy, a, b)
    check_grad(lambda y: mt.xlogy(2.5, y), b)
    check_grad(lambda x: x.xlogy(3.0), a)


# (x, y) -> (xlogy, d/dx, d/dy), PyTorch 2's values (derivatives.yaml: dx = xlogy(g, y), 0 where x = 0 and
# y <= 0; dy = g x / y)
XLOGY_CORNERS = [((0.0, 0.0), (0.0, 0.0, NAN)), ((0.0, NAN), (NAN, NAN, NAN)), ((0.0, -1.0), (0.0, 0.0, 0.0)),
                 ((1.0, 0.0), (-INF, -INF, INF)), ((0.0, INF), (0.0, INF, 0.0)), ((2.0, INF), (INF, INF, 0.0)),
                 ((NAN, 0.0), (NAN, -INF, NAN)), ((NAN, 2.0), (NAN, math.log(2), NAN)),
                 ((0.0, -INF), (0.0, 0.0, 0.0)), ((1.0, -INF), (NAN, NAN, 0.0)), ((-1.0, INF), (-INF, INF, 0.0)),
                 ((1.0, NAN), (NAN, NAN, NAN))]


@pytest.mark.parametrize("point, expected", XLOGY_CORNERS)
def test_xlogy_corners_match_pytorch(point, expected):
    same(grads(mt.xlogy, *point), expected)


def test_xlogy_dtypes_scalars_and_in_place():
    i, f = mt.tensor([1, 2, 3]), mt.tensor([1.0, 2.0, 3.0])
    assert mt.xlogy(i, i).dtype is mt.float32 and mt.xlogy(2, i).dtype is mt.float32
    assert_close(mt.xlogy(2, f), 2 * np.log([1.0, 2.0, 3.0])) and assert_close(mt.xlogy(f, 3), np.log(3) * f.numpy())
    assert mt.xlogy(f.half(), 2).dtype is mt.float16 and mt.xlogy(f.double(), f).dtype is mt.float64
    assert mt.xlogy(f.bfloat16(), 2).dtype is mt.bfloat16
    assert mt.xlogy(mt.tensor([False, True]), mt.tensor([INF, 2.0])).tolist() == [0.0, pytest.approx(math.log(2))]
    x = mt.tensor([0.0, 1.0, 2.0])
    assert x.xlogy_(2).tolist() == pytest.approx([0.0, math.log(2), 2 * math.log(2)])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clone().xlogy_(2)
    with pytest.raises(TypeError, match="expects a Tensor"):
        mt.xlogy(2.0, 3.0)
    # a Python y <= 0 (or nan) masks dx at x = 0, as PyTorch's Scalar_Other overload
    for y in (0.0, -1.0, NAN):
        assert grads(lambda t: mt.xlogy(t, y), [0.0])[1] == [0.0]


# -------------------------------------------------------------------------------------------------- logit
LOGIT_X = [-0.5, 0.0, 0.05, 0.5, 0.95, 1.0, 1.5, NAN]


@pytest.mark.parametrize("eps, values, slopes", [
    (None, [NAN, -INF, -2.944439, 0.0, 2.944439, INF, NAN, NAN], [NAN, INF, 21.052632, 4.0, 21.052632, INF, NAN, NAN]),
    (0.1, [-2.197225, -2.197225, -2.197225, 0.0, 2.197225, 2.197225, 2.197225, NAN], [0, 0, 0, 4.0, 0, 0, 0, NAN]),
    (0.05, [-2.944439] * 3 + [0.0] + [2.944439] * 3 + [NAN], [0, 0, 21.052632, 4.0, 21.052632, 0, 0, NAN]),
    (-1.0, [NAN, -INF, -2.944439, 0.0, 2.944439, INF, NAN, NAN], [NAN, INF, 21.052632, 4.0, 21.052632, INF, NAN, NAN]),
])
def test_logit_values_and_gradients_match_pytorch(eps, values, slopes):
    out, grad = grads(lambda x: mt.logit(x, eps), LOGIT_X)
    same(np.round(out, 6), values)
    same(np.round(grad, 6), slopes)


@FEW
@given(shape=nonscalar_shapes, seed=seeds, eps=st.sampled_from([None, 0.2]))
def test_logit_gradcheck(shape, seed, eps):
    p = np.random.default_rng(seed).uniform(0.05, 0.95, shape)
    if eps is not None:
        p = away_from(away_from(p, (0.2,), 0.02), (0.8,), 0.02)  # no finite difference across the clamp
    assert_close(mt.logit(t64(p, False), eps), np.log(np.clip(p, eps or 0, 1 - (eps or 0)) /
                                                       (1 - np.clip(p, eps or 0, 1 - (eps or 0)))), rtol=1e-12)
    check_grad(lambda t: t.logit(eps), p)


def test_logit_dtypes_and_in_place():
    assert mt.logit(mt.tensor([1, 0])).tolist() == [INF, -INF]  # integers give the default float dtype
    assert mt.logit(mt.tensor([0.3]), eps=0.7).tolist() == pytest.approx([math.log(0.7 / 0.3)])  # lo wins
    for dtype in (mt.float16, mt.bfloat16):
        assert mt.logit(mt.tensor([0.5], dtype=dtype)).dtype is dtype
        assert mt.logit(mt.tensor([0.01, 0.3], dtype=dtype), eps=0.05).tolist() == \
            pytest.approx([-2.944439, -0.847298], abs=0.02)
    x = mt.tensor([0.2])
    assert x.logit_(0.3) is x and x.tolist() == pytest.approx([math.log(0.3 / 0.7)])
    with pytest.raises(RuntimeError, match="can't be cast"):
        mt.tensor([1]).logit_()


# -------------------------------------------------------------------------------------- clamp_min, clamp_max
@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds)
def test_clamp_min_max_with_tensor_bounds(shapes, seed):
    (sa, sb), _ = shapes
    a, b = randn(seed, sa), randn(seed + 1, sb)
    a = np.where(np.abs(a - b) < 0.05, a + 0.2, a)  # no finite difference across the kink
    assert_close(mt.clamp_min(t64(a, False), t64(b, False)), np.maximum(a, b))
    assert_close(t64(a, False).clamp_max(t64(b, False)), np.minimum(a, b))
    check_grad(mt.clamp_min, a, b)
    check_grad(mt.clamp_max, a, b)


def test_clamp_min_max_ties_nans_and_scalars_as_pytorch():
    same(grads(mt.clamp_min, [1.0, 2.0, 3.0], [2.0, 2.0, 2.0])[1:], [[0, 1, 1], [1, 0, 0]])  # a tie goes to input
    same(grads(mt.clamp_max, [1.0, 2.0, 3.0], [2.0, 2.0, 2.0])[1:], [[1, 1, 0], [0, 0, 1]])
    same(grads(lambda x, m: mt.clamp(x, min=m), [1.0, 2.0, 3.0], [2.0] * 3)[1:], [[0, 1, 1], [1, 0, 0]])
    same(grads(mt.clamp_min, [NAN, 2.0], [1.0, NAN]), [[NAN, NAN], [0, 0], [0, 0]])
    same(grads(lambda x: x.clamp_min(2), [1.0, 2.0, 3.0]), [[2, 2, 3], [0, 1, 1]])
    i = mt.tensor([1, 2, 3])
    assert mt.clamp_max(i, 2).tolist() == [1, 2, 2] and mt.clamp_max(i, 2).dtype is mt.int64
    assert mt.clamp_min(i, 2.5).tolist() == [2.5, 2.5, 3.0] and mt.clamp_min(i, mt.tensor([1.5])).dtype is mt.float32
    assert mt.clamp_min(mt.ones(3), mt.tensor(1.5, dtype=mt.float64)).dtype is mt.float32  # a 0-d bound
    assert mt.clamp_min(mt.tensor(1.0), mt.ones(2)).shape == (2,)
    assert mt.clamp_min(mt.ones(2).half(), 2.5).dtype is mt.float16
    x = mt.tensor([1.0, 5.0])
    assert x.clamp_min_(2).clamp_max_(mt.tensor([4.0, 4.0])) is x and x.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clone().clamp_min_(2.5)
    with pytest.raises(TypeError, match="must be Number or Tensor, not NoneType"):
        mt.clamp_min(x, None)


# ----------------------------------------------------------------------------------------------------- diff
@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, n=st.integers(0, 4), edges=st.sampled_from(["", "p", "a", "pa"]),
       data=st.data())
def test_diff_matches_numpy(shape, seed, n, edges, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    x = randn(seed, shape)
    extra = tuple(s if k != dim % len(shape) else 2 for k, s in enumerate(shape))
    pre = randn(seed + 1, extra) if "p" in edges else None
    app = randn(seed + 2, extra) if "a" in edges else None
    kwargs = {k: v for k, v in (("prepend", pre), ("append", app)) if v is not None}
    ref = np.diff(x, n, dim, **kwargs) if n else x  # n = 0: input, without prepend and append, as PyTorch
    out = mt.diff(t64(x, False), n, dim, **{k: t64(v, False) for k, v in kwargs.items()})
    assert_close(out, ref, rtol=1e-12, atol=1e-12)
    if out.numel():
        check_grad(lambda *ts: ts[0].diff(n, dim, *ts[1:]) if not kwargs else
                   mt.diff(ts[0], n, dim, **dict(zip(kwargs, ts[1:]))), x, *kwargs.values())


def test_diff_dtypes_and_errors_as_pytorch():
    assert mt.diff(mt.tensor([True, False, False])).tolist() == [True, False]  # xor for bool
    assert mt.diff(mt.tensor([True, False, False]), n=2).tolist() == [True]
    assert mt.diff(mt.tensor([1, 2, 3]), prepend=mt.tensor([0.5])).tolist() == [0.5, 1.0, 1.0]
    assert mt.diff(mt.tensor([True, False]), prepend=mt.tensor([1])).tolist() == [0, -1]
    assert mt.diff(mt.tensor([1, 2], dtype=mt.uint8)).tolist() == [1]
    assert mt.diff(mt.tensor([1.0, 2.0, 4.0]), n=5).shape == (0,) and mt.diff(mt.empty(0)).shape == (0,)
    f = mt.tensor([1.0, 2.0, 4.0])
    kept = mt.diff(f, n=0, prepend=mt.tensor([9.0]))  # a copy of input: prepend is ignored at n = 0
    assert kept.tolist() == [1.0, 2.0, 4.0] and kept.array is not f.array
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        mt.diff(f, n=-1)
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        mt.diff(mt.tensor(1.0))
    with pytest.raises(RuntimeError, match="same dimension as input"):
        mt.diff(mt.ones(2, 3), dim=0, prepend=mt.ones(1, 3, 1))
    with pytest.raises(RuntimeError, match="input.size\\(1\\) = 3, but got tensor.size\\(1\\) = 4"):
        mt.diff(mt.ones(2, 3), dim=0, append=mt.ones(1, 4))
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.diff(mt.ones(2, 3), dim=2)
    with pytest.raises(TypeError, match="argument 'prepend' must be Tensor, not float"):
        mt.diff(f, prepend=2.0)
    with pytest.raises(TypeError, match="argument 'n' must be int, not float"):
        mt.diff(f, n=1.5)
