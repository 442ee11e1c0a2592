"""Reductions over dims (None, int, tuple, negative) with keepdim: forward vs NumPy float64, gradcheck."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import FEW, SETTINGS, assert_close, check_grad, randn, seeds, shapes, t64


@st.composite
def shape_and_dims(draw, single: bool = False):
    """A shape and a dim argument as PyTorch takes it: None, an int or a tuple, negative aliases mixed in
    (a 0-d tensor takes 0 or -1)."""
    shape = draw(shapes)
    m = max(len(shape), 1)
    kind = "int" if single else draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return shape, None
    axes = draw(st.lists(st.integers(0, m - 1), unique=True, min_size=1, max_size=m))
    dims = tuple(a - m if draw(st.booleans()) else a for a in axes)
    return (shape, dims[0]) if kind == "int" else (shape, dims)


def np_axes(shape, dim):
    """The NumPy axis argument for a PyTorch dim argument."""
    if dim is None or len(shape) == 0:
        return None
    return tuple(d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim))


def count(shape, dim):
    axes = np_axes(shape, dim)
    return int(np.prod(shape if axes is None else [shape[a] for a in axes]))


def np_logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


# name -> (call on a tensor, NumPy reference)
REDUCTIONS = {
    "sum": (lambda t, d, k: t.sum(d, k), lambda x, a, k: np.sum(x, axis=a, keepdims=k)),
    "mean": (lambda t, d, k: t.mean(d, k), lambda x, a, k: np.mean(x, axis=a, keepdims=k)),
    "amax": (lambda t, d, k: t.amax(() if d is None else d, k), lambda x, a, k: np.amax(x, axis=a, keepdims=k)),
    "amin": (lambda t, d, k: mt.amin(t, () if d is None else d, keepdim=k),
             lambda x, a, k: np.amin(x, axis=a, keepdims=k)),
    "logsumexp": (lambda t, d, k: t.logsumexp(tuple(range(t.ndim)) if d is None else d, k), np_logsumexp),
    "norm2": (lambda t, d, k: t.norm(2, d, k), lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k))),
    "norm1": (lambda t, d, k: t.norm(1, d, k), lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k)),
    "norm3": (lambda t, d, k: mt.norm(t, 3, d, k),
              lambda x, a, k: np.sum(np.abs(x) ** 3, axis=a, keepdims=k) ** (1 / 3)),
    "norm_inf": (lambda t, d, k: t.norm(float("inf"), d, k), lambda x, a, k: np.amax(np.abs(x), axis=a, keepdims=k)),
}


@SETTINGS
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds, name=st.sampled_from(sorted(REDUCTIONS)))
def test_reductions_forward_and_grad(sd, keepdim, seed, name):
    shape, dim = sd
    fn, ref = REDUCTIONS[name]
    x = randn(seed, shape)
    if name.startswith("norm"):
        x = np.where(np.abs(x) < 0.05, 0.3, x)  # |x| has a kink at 0
    expected = np.asarray(ref(x, np_axes(shape, dim), keepdim))
    out = fn(t64(x, False), dim, keepdim)
    assert out.dtype is mt.float64
    assert_close(out, expected, rtol=1e-10, atol=1e-12)
    check_grad(lambda t: fn(t, dim, keepdim), x)


@SETTINGS
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds, correction=st.sampled_from([0, 1, 2]),
       std=st.booleans())
def test_var_std(sd, keepdim, seed, correction, std):
    shape, dim = sd
    x = randn(seed, shape)
    fn = (lambda t: t.std(dim, correction=correction, keepdim=keepdim)) if std else \
        (lambda t: t.var(dim, correction=correction, keepdim=keepdim))
    n = count(shape, dim)
    if n <= correction:
        return  # no degrees of freedom left: inf/nan, as in PyTorch
    ref = (np.std if std else np.var)(x, axis=np_axes(shape, dim), ddof=correction, keepdims=keepdim)
    assert_close(fn(t64(x, False)), np.asarray(ref), rtol=1e-10, atol=1e-12)
    if not std or n > 1:
        check_grad(fn, x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_var_without_degrees_of_freedom_is_nan_not_an_error():
    x = mt.tensor([1.5], requires_grad=True)
    v = x.var()
    assert np.isnan(v.item())
    v.backward()  # PyTorch: nan, never a ZeroDivisionError
    assert np.isnan(x.grad.item())
    assert mt.tensor([1.5]).var(correction=0).item() == 0.0


def test_std_of_a_constant_has_a_zero_gradient():
    x = mt.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], requires_grad=True)
    s = x.std(dim=1)
    assert_close(s, [0.0, 1.0])
    s.sum().backward()  # PyTorch masks gy / (2 std) to 0 where std = 0 instead of inf * 0 = nan
    assert_close(x.grad, [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.5]])


def test_var_unbiased_keyword_and_default():
    x = mt.tensor([1.0, 2.0, 4.0])
    assert_close(x.var(), np.var([1.0, 2.0, 4.0], ddof=1))
    assert_close(x.var(unbiased=False), np.var([1.0, 2.0, 4.0]))
    assert_close(mt.std(x, dim=0, correction=0), np.std([1.0, 2.0, 4.0]))


@SETTINGS
@given(sd=shape_and_dims(single=True), keepdim=st.booleans(), seed=seeds, op=st.sampled_from(["max", "min"]))
def test_max_min_along_dim(sd, keepdim, seed, op):
    shape, dim = sd
    x = randn(seed, shape)
    axis = np_axes(shape, dim)
    values, indices = getattr(t64(x, False), op)(dim, keepdim)
    a = None if axis is None else axis[0]
    np_val = getattr(np, "a" + op)(x, axis=a, keepdims=keepdim)
    np_idx = getattr(np, "arg" + op)(x, axis=a, keepdims=keepdim) if a is not None else np.zeros(())
    assert_close(values, np.asarray(np_val))
    assert indices.dtype is mt.int64
    np.testing.assert_array_equal(indices.numpy(), np_idx)
    check_grad(lambda t: getattr(t, op)(dim, keepdim)[0], x)
    check_grad(lambda t: getattr(t, op)(dim, keepdim).values, x)


def test_max_with_ties():
    x = mt.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    v, i = x.max(dim=1)
    assert v.tolist() == [3.0, 2.0] and i.tolist() == [1, 0]  # the first maximum, as documented
    v.sum().backward()
    assert_close(x.grad, [[0, 1, 0], [1, 0, 0]])  # only the returned index gets the gradient
    x.grad = None
    x.max().backward()
    assert_close(x.grad, [[0, 0.5, 0.5], [0, 0, 0]])  # full reduction: ties share evenly
    x.grad = None
    x.amax(dim=1).sum().backward()
    assert_close(x.grad, [[0, 0.5, 0.5], [0.5, 0.5, 0]])
    x.grad = None
    x.amin(dim=0).sum().backward()
    assert_close(x.grad, [[1, 0, 0], [0, 1, 1]])
    y = mt.tensor([2.0, 2.0], requires_grad=True)
    y.norm(float("inf")).backward()
    assert_close(y.grad, [0.5, 0.5])


def test_max_of_two_tensors_is_elementwise():
    assert mt.max(mt.tensor([1.0, 5.0]), mt.tensor([3.0, 2.0])).tolist() == [3.0, 5.0]
    assert mt.min(mt.tensor([1.0, 5.0]), mt.tensor([3.0, 2.0])).tolist() == [1.0, 2.0]


def test_max_min_results_are_named_tuples():
    out = mt.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=0, keepdim=True)
    assert out.values.tolist() == [[7.0, 5.0]] and out.indices.tolist() == [[1, 0]]
    values, indices = out
    assert values.shape == (1, 2) and indices.shape == (1, 2)


@SETTINGS
@given(shape=shapes, seed=seeds, keepdim=st.booleans(), data=st.data())
def test_argmax_argmin(shape, seed, keepdim, data):
    x = randn(seed, shape)
    m = max(len(shape), 1)
    dim = data.draw(st.one_of(st.none(), st.integers(-m, m - 1)))
    for name in ("argmax", "argmin"):
        out = getattr(mt.tensor(x), name)(dim, keepdim)
        assert out.dtype is mt.int64
        if dim is None:
            expected = getattr(np, name)(x.astype(np.float32))
            if keepdim:
                expected = np.reshape(expected, (1,) * len(shape))
        else:
            axis = dim % m if shape else None
            expected = getattr(np, name)(x.astype(np.float32), axis=axis, keepdims=keepdim)
        np.testing.assert_array_equal(out.numpy(), expected)


def test_argmax_ties_take_the_first():
    assert mt.tensor([1.0, 3.0, 3.0]).argmax().item() == 1
    assert mt.tensor([[0, 0], [5, 5]]).argmax(dim=1).tolist() == [0, 0]
    assert mt.tensor([[2.0, 1.0], [1.0, 1.0]]).argmin().item() == 1


@SETTINGS
@given(shape=shapes, seed=seeds, keepdim=st.booleans(), data=st.data(), zeros=st.integers(0, 2))
def test_prod_with_zeros(shape, seed, keepdim, data, zeros):
    x = randn(seed, shape) + 0.5
    flat = x.reshape(-1)
    flat[np.random.default_rng(seed).choice(flat.size, min(zeros, flat.size), replace=False)] = 0.0
    m = max(len(shape), 1)
    dim = data.draw(st.one_of(st.none(), st.integers(-m, m - 1)))
    axis = None if dim is None or not shape else dim % m
    expected = np.prod(x, axis=axis, keepdims=keepdim if dim is not None else False)
    fn = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim, keepdim))
    assert_close(fn(t64(x, False)), np.asarray(expected), rtol=1e-12)
    check_grad(fn, x)  # prod is linear in each entry: differences are exact even at zeros


def test_prod_gradient_with_zeros_known_values():
    x = mt.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]], requires_grad=True)
    x.prod(dim=1).sum().backward()
    assert_close(x.grad, [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]])
    assert mt.tensor([2, 3, 4]).prod().item() == 24 and mt.tensor([2, 3]).prod().dtype is mt.int64


def test_logsumexp_is_stable():
    x = mt.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]], requires_grad=True)
    out = x.logsumexp(dim=1)
    assert_close(out, [1000.0 + np.log(2.0), -1000.0 + np.log(2.0)], rtol=1e-7)
    out.sum().backward()
    assert_close(x.grad, np.full((2, 2), 0.5), rtol=1e-4)  # exp(x - y) with y rounded to float32
    x64 = t64([[1000.0, 1000.0, -1000.0]])
    x64.logsumexp(1).sum().backward()
    assert_close(x64.grad, [[0.5, 0.5, 0.0]], rtol=1e-12)
    with np.errstate(divide="ignore"):
        neg_inf = mt.tensor([[-np.inf, -np.inf], [0.0, -np.inf]]).logsumexp(1)
    assert neg_inf.tolist() == [-np.inf, 0.0]
    assert mt.logsumexp(mt.tensor([1, 2]), 0).dtype is mt.float32


@pytest.mark.parametrize("p", ["fro", 2, 1, 3, 0.5, float("inf")])
def test_norm_at_zero_has_a_zero_gradient(p):
    x = mt.zeros(3, requires_grad=True)
    n = x.norm(p)
    assert n.item() == 0.0
    n.backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_norm_gradient_with_some_zero_entries():
    check_grad(lambda t: t.norm(3), [0.0, 1.0, -2.0])
    check_grad(lambda t: t.norm(1.5, dim=1), [[0.0, 1.0], [-2.0, 0.5]])
    x = t64([0.0, 1.0, -2.0])
    x.norm(0.5).backward()
    assert x.grad[0].item() == 0.0  # PyTorch's subgradient where x = 0 for p < 1
    y = mt.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    y.norm(dim=1).sum().backward()
    assert_close(y.grad, [[0.0, 0.0], [0.6, 0.8]])


def test_norm_variants():
    a = np.array([[3.0, -4.0], [1.0, 0.0]])
    x = mt.tensor(a)
    assert_close(x.norm(), np.sqrt((a ** 2).sum()))
    assert_close(x.norm("fro", dim=(0, 1)), np.sqrt((a ** 2).sum()))
    assert_close(x.norm(p=1, dim=1), [7.0, 1.0])
    assert_close(x.norm(p=float("inf"), dim=0), [3.0, 4.0])
    assert_close(x.norm(p=float("-inf")), 0.0)
    assert_close(x.norm(p=0), 3.0)
    assert_close(x.norm(p="nuc"), np.linalg.norm(a, "nuc"))  # a matrix norm, as PyTorch's
    with pytest.raises(RuntimeError, match="not supported"):
        x.norm(p="max")
    g = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    g.norm(p=1).backward()
    assert_close(g.grad, [1.0, -1.0, 1.0])


@SETTINGS
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds)
def test_all_any(sd, keepdim, seed):
    shape, dim = sd
    b = np.random.default_rng(seed).random(shape) < 0.6
    axis = np_axes(shape, dim)
    for name in ("all", "any"):
        for t in (mt.tensor(b), mt.tensor(b.astype(np.float32))):
            out = getattr(t, name)(dim, keepdim)
            assert out.dtype is mt.bool
            np.testing.assert_array_equal(out.numpy(), getattr(np, name)(b, axis=axis, keepdims=keepdim))


@FEW
@given(sd=shape_and_dims(), keepdim=st.booleans(), seed=seeds)
def test_integer_sum_and_extremes(sd, keepdim, seed):
    shape, dim = sd
    a = np.random.default_rng(seed).integers(-5, 5, shape)
    axis = np_axes(shape, dim)
    t = mt.tensor(a, dtype=mt.int32)
    s = t.sum(dim, keepdim)
    assert s.dtype is mt.int64
    np.testing.assert_array_equal(s.numpy(), np.sum(a, axis=axis, keepdims=keepdim))
    np.testing.assert_array_equal(t.amax(() if dim is None else dim, keepdim).numpy(),
                                  np.amax(a, axis=axis, keepdims=keepdim))
    assert mt.tensor(b := a > 0).sum().item() == int(b.sum())


def test_sum_dtype_argument_and_mean_of_ints():
    x = mt.tensor([1, 2, 4])
    assert x.sum(dtype=mt.float64).dtype is mt.float64
    assert_close(x.float().mean(), 7 / 3, rtol=1e-6)
    assert_close(mt.mean(x, dtype=mt.float32), 7 / 3, rtol=1e-6)


def test_reduction_dim_errors():
    x = mt.ones(2, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sum(2)
    with pytest.raises(IndexError):
        x.max(dim=-3)
    with pytest.raises(RuntimeError, match="multiple times"):
        x.sum((1, -1))
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        mt.zeros(0).amax()


def test_zero_dim_reductions():
    s = mt.tensor(2.5, requires_grad=True)
    assert s.sum().item() == 2.5 and s.sum(0).item() == 2.5 and s.mean(-1).item() == 2.5
    v, i = s.max(0)
    assert v.item() == 2.5 and i.item() == 0
    s.sum(0, keepdim=True).backward()
    assert s.grad.item() == 1.0


def test_reductions_keep_float32():
    x = mt.randn(3, 4)
    for out in (x.sum(1), x.mean(), x.var(0), x.std(), x.amax(0), x.logsumexp(1), x.norm(), x.prod(0),
                x.max(0).values):
        assert out.dtype is mt.float32
