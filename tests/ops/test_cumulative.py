"""Cumulative ops, sorting, var_mean/std_mean and the ``axis=``/``keepdims=`` spellings: NumPy float64
references over shapes, gradients by gradcheck (cumprod with zeros included), PyTorch's dtypes and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import FEW, SETTINGS, assert_close, check_grad, nonscalar_shapes, randn, seeds, shapes, t64


def dims(shape):
    return st.integers(-max(len(shape), 1), max(len(shape), 1) - 1)


def axis_of(dim, shape):
    return dim % len(shape) if shape else 0


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data(), zeros=st.booleans())
def test_cumsum_cumprod(shape, seed, data, zeros):
    dim = data.draw(dims(shape))
    x = randn(seed, shape)
    if zeros:  # cumprod's gradient is exact across zeros, as PyTorch's
        x = np.where(randn(seed + 1, shape) > 0.5, 0.0, x)
    axis = axis_of(dim, shape)
    ref = x.reshape(-1) if not shape else x
    assert_close(mt.cumsum(t64(x, False), dim), np.cumsum(ref, axis).reshape(shape), rtol=1e-12)
    assert_close(t64(x, False).cumprod(dim), np.cumprod(ref, axis).reshape(shape), rtol=1e-12)
    check_grad(lambda t: mt.cumsum(t, dim), x)
    check_grad(lambda t: mt.cumprod(t, dim), x)


def test_cumprod_gradient_with_zeros_matches_pytorch_values():
    x = mt.tensor([2.0, 0.0, 3.0, 0.0, 4.0], requires_grad=True)
    mt.cumprod(x, 0).sum().backward()
    assert x.grad.tolist() == [1.0, 8.0, 0.0, 0.0, 0.0]


def test_cumprod_over_a_length_one_axis_passes_the_gradient_even_at_infinities():
    x = mt.tensor([[np.inf], [-np.inf], [0.0], [2.0]], requires_grad=True)  # y = x along dim 1
    (mt.cumprod(x, 1) * mt.tensor([[3.0], [-2.0], [5.0], [7.0]])).sum().backward()
    assert x.grad.tolist() == [[3.0], [-2.0], [5.0], [7.0]]  # PyTorch's: the quotient g y / x is nan at +-inf
    v = mt.tensor([np.inf, 2.0], requires_grad=True)
    mt.linalg.vander(v, N=2).sum().backward()  # columns 1, x (built by a cumprod of one element)
    assert v.grad.tolist() == [1.0, 1.0]


def test_cumulative_dtypes_and_errors():
    assert mt.cumsum(mt.tensor([1, 2], dtype=mt.int32), 0).dtype is mt.int64
    assert mt.cumsum(mt.tensor([True, True]), 0).tolist() == [1, 2]
    assert mt.cumprod(mt.tensor([1, 2, 3], dtype=mt.int8), 0).dtype is mt.int64
    assert mt.cumsum(mt.tensor([1, 2]), 0, dtype=mt.float64).dtype is mt.float64
    assert mt.cumsum(mt.tensor([[1.0, 2.0]]), axis=1).tolist() == [[1.0, 3.0]]
    x = mt.tensor([1.0, 2.0])
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0]
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.cumsum(mt.ones(2), 1)
    with pytest.raises(TypeError):
        mt.cumsum(mt.ones(2))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        mt.logcumsumexp(mt.tensor([1, 2]), 0)


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_logcumsumexp(shape, seed, data):
    dim = data.draw(dims(shape))
    x = randn(seed, shape) * 3
    ref = np.logaddexp.accumulate(x.reshape(-1) if not shape else x, axis=axis_of(dim, shape)).reshape(shape)
    assert_close(mt.logcumsumexp(t64(x, False), dim), ref, rtol=1e-12)
    check_grad(lambda t: t.logcumsumexp(dim), x)


def test_logcumsumexp_is_stable():
    x = mt.tensor([-1000.0, 0.0, 1000.0, 1000.0], dtype=mt.float64, requires_grad=True)
    assert_close(mt.logcumsumexp(x, 0), [-1000.0, 0.0, 1000.0, 1000 + np.log(2)], rtol=1e-14)
    mt.logcumsumexp(x, 0).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data(), op=st.sampled_from(["cummax", "cummin"]))
def test_cummax_cummin(shape, seed, data, op):
    dim = data.draw(dims(shape))
    x = np.round(randn(seed, shape), 1)  # ties happen
    values, indices = getattr(mt, op)(t64(x, False), dim)
    axis = axis_of(dim, shape)
    accumulate = np.maximum.accumulate if op == "cummax" else np.minimum.accumulate
    assert_close(values, accumulate(x, axis=axis))
    assert indices.dtype is mt.int64
    assert_close(np.take_along_axis(x, indices.numpy(), axis), values.numpy())
    later = np.moveaxis(x, axis, -1)  # the latest position on ties: no later element up to j equals values[j]
    idx, vals = np.moveaxis(indices.numpy(), axis, -1), np.moveaxis(values.numpy(), axis, -1)
    for j in range(later.shape[-1]):
        tail = later[..., : j + 1] == vals[..., j: j + 1]
        assert np.array_equal(idx[..., j], (j - np.argmax(tail[..., ::-1], -1)))
    xs = x + np.arange(x.size).reshape(shape) * 1e-3  # distinct values for the gradient
    check_grad(lambda t: getattr(t, op)(dim).values, xs)


def test_cummax_nan_and_namedtuple():
    nan = float("nan")
    out = mt.cummax(mt.tensor([1.0, 3.0, 3.0, 2.0, nan, 5.0, nan, 1.0]), 0)
    assert out.indices.tolist() == [0, 1, 2, 2, 4, 4, 6, 6] and np.isnan(out.values.numpy()[4:]).all()
    values, indices = mt.cummin(mt.tensor(3.0), 0)
    assert values.shape == () and indices.item() == 0


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data(), descending=st.booleans())
def test_sort_and_argsort(shape, seed, data, descending):
    dim = data.draw(dims(shape))
    x = np.round(randn(seed, shape), 1)
    axis = axis_of(dim, shape)
    values, indices = mt.sort(t64(x, False), dim, descending=descending, stable=True)
    key = -x if descending else x
    order = np.argsort(key, axis=axis, kind="stable")  # stable: ties keep their order
    assert np.array_equal(indices.numpy(), order) and indices.dtype is mt.int64
    assert_close(values, np.take_along_axis(x, order, axis))
    assert np.array_equal(mt.argsort(t64(x, False), dim, descending).numpy(), order)
    xs = x + np.arange(x.size).reshape(shape) * 1e-3
    check_grad(lambda t: t.sort(dim, descending).values * t64(np.arange(t.numel()).reshape(shape), False), xs)


@FEW
@given(shape=nonscalar_shapes, seed=seeds, data=st.data(), largest=st.booleans())
def test_topk(shape, seed, data, largest):
    dim = data.draw(dims(shape))
    axis = axis_of(dim, shape)
    k = data.draw(st.integers(0, shape[axis]))
    x = randn(seed, shape)
    values, indices = mt.topk(t64(x, False), k, dim, largest=largest)
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    expected = np.take_along_axis(order, np.arange(k).reshape([-1 if d == axis else 1 for d in range(x.ndim)]),
                                  axis)
    assert np.array_equal(indices.numpy(), expected)
    assert_close(values, np.take_along_axis(x, expected, axis))
    check_grad(lambda t: t.topk(k, dim, largest).values, x)


def test_sorting_corners_and_errors():
    nan = float("nan")
    x = mt.tensor([2.0, nan, 1.0, 2.0, nan, 0.0])
    assert mt.sort(x, descending=True).indices.tolist() == [1, 4, 0, 3, 2, 5]  # nans first, ties in order
    assert mt.sort(x).indices.tolist() == [5, 2, 0, 3, 1, 4]
    assert mt.msort(mt.tensor([[3, 1], [1, 2]])).tolist() == [[1, 1], [3, 2]]
    assert mt.sort(mt.tensor(3.0)).values.shape == () and mt.argsort(mt.tensor([3, 1, 2])).tolist() == [1, 2, 0]
    assert mt.topk(mt.tensor([1.0, 3.0, 2.0]), 2, largest=False).indices.tolist() == [0, 2]
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        mt.topk(mt.ones(2), 3)


@SETTINGS
@given(shape=shapes, seed=seeds, correction=st.sampled_from([0, 1]), keep=st.booleans(), data=st.data())
def test_var_mean_std_mean(shape, seed, correction, keep, data):
    dim = data.draw(st.none() | dims(shape)) if shape else None
    x = randn(seed, shape)
    axis = None if dim is None else axis_of(dim, shape)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # one element and correction=1: nan, as PyTorch
        ref_var = np.var(x, axis=axis, ddof=correction, keepdims=keep)
        v, m = mt.var_mean(t64(x, False), dim, correction=correction, keepdim=keep)
        s, m2 = mt.std_mean(t64(x, False), axis=dim, correction=correction, keepdims=keep)
    assert_close(v, ref_var, rtol=1e-12) and assert_close(s, np.sqrt(ref_var), rtol=1e-12)
    assert_close(m, np.mean(x, axis=axis, keepdims=keep)) and assert_close(m2, m.numpy())


def test_moments_errors_and_unbiased():
    x = mt.tensor([1.0, 2.0, 4.0])
    assert_close(mt.var_mean(x, unbiased=False)[0], np.var([1, 2, 4]))
    with pytest.raises(RuntimeError, match="std_mean only support floating point"):
        mt.std_mean(mt.tensor([1, 2]))


def test_numpy_spellings_on_reductions():
    x = mt.tensor(randn(0, (2, 3)))
    for name in ("sum", "mean", "amax", "amin", "logsumexp", "std", "var"):
        for fn in (getattr(mt, name), lambda t, name=name, **kw: getattr(t, name)(**kw)):
            assert_close(fn(x, axis=1, keepdims=True), getattr(mt, name)(x, 1, keepdim=True).numpy())
    assert mt.max(x, axis=1).values.shape == (2,) and x.argmax(axis=0).shape == (3,)
    assert mt.all(x > -10, axis=0).shape == (3,) and x.prod(axis=1).shape == (2,)
    with pytest.raises(TypeError, match="got both 'dim' and its alias 'axis'"):
        x.sum(dim=0, axis=1)


@pytest.mark.torch
def test_cumulative_and_sorting_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.round(randn(0, (3, 5)), 1)
    x[0, 2] = 0.0
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        for dim in (0, 1):
            a, b = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            ours, theirs = getattr(mt, name)(a, dim), getattr(torch, name)(b, dim)
            assert_close(ours, theirs.detach().numpy(), rtol=1e-12)
            (ours * mt.tensor(x)).sum().backward()
            (theirs * torch.tensor(x)).sum().backward()
            assert_close(a.grad, b.grad.numpy(), rtol=1e-10, atol=1e-12)
    for name in ("cummax", "cummin"):
        ours, theirs = getattr(mt, name)(mt.tensor(x), 1), getattr(torch, name)(torch.tensor(x), 1)
        assert ours.indices.tolist() == theirs.indices.tolist()
    for descending in (False, True):
        ours, theirs = mt.sort(mt.tensor(x), 1, descending, stable=True), \
            torch.sort(torch.tensor(x), dim=1, descending=descending, stable=True)
        assert ours.indices.tolist() == theirs.indices.tolist()
    v, m = torch.std_mean(torch.tensor(x), dim=1, correction=0, keepdim=True)
    ours = mt.std_mean(mt.tensor(x), axis=1, correction=0, keepdims=True)
    assert_close(ours[0], v.numpy(), rtol=1e-12) and assert_close(ours[1], m.numpy(), rtol=1e-12)
