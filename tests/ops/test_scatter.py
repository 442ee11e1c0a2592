"""scatter / scatter_add / scatter_reduce (every reduction, include_self both ways), take_along_dim, nonzero,
argwhere, masked_select vs NumPy float64 references written here over shapes, gradcheck, PyTorch's errors and
torch parity (values and gradients) where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64

REDUCE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def scatter_reduce_ref(x, dim, index, src, reduce, include_self):
    """The loop definition of scatter_reduce, element by element (the reference, not the implementation)."""
    out = x.copy()
    places: dict = {}
    for i in np.ndindex(*index.shape):
        j = list(i)
        j[dim] = index[i]
        places.setdefault(tuple(j), []).append(src[i])
    for j, values in places.items():
        values = ([x[j]] if include_self else []) + values
        out[j] = np.mean(values) if reduce == "mean" else REDUCE[reduce].reduce(values)
    return out


@st.composite
def scatter_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    dim = draw(st.integers(0, len(shape) - 1))
    ishape = tuple(draw(st.integers(1, n)) if k != dim else draw(st.integers(1, 5)) for k, n in enumerate(shape))
    index = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, shape[dim] - 1)))
    return shape, dim, index


@SETTINGS
@given(case=scatter_case(), seed=seeds, reduce=st.sampled_from(["sum", "prod", "mean", "amax", "amin"]),
       include_self=st.booleans())
def test_scatter_reduce_matches_the_loop_definition_with_gradients(case, seed, reduce, include_self):
    shape, dim, index = case
    x, src = randn(seed, shape), randn(seed + 1, index.shape)
    y = mt.scatter_reduce(t64(x, False), dim, mt.tensor(index), t64(src, False), reduce, include_self=include_self)
    assert_close(y, scatter_reduce_ref(x, dim, index, src, reduce, include_self), rtol=1e-12, atol=1e-12)
    check_grad(lambda a, b: a.scatter_reduce(dim, mt.tensor(index), b, reduce, include_self=include_self), x, src)


@SETTINGS
@given(case=scatter_case(), seed=seeds)
def test_scatter_add_and_scatter_with_gradients(case, seed):
    shape, dim, index = case
    x, src = randn(seed, shape), randn(seed + 1, index.shape)
    assert_close(mt.scatter_add(t64(x, False), dim, mt.tensor(index), t64(src, False)),
                 scatter_reduce_ref(x, dim, index, src, "sum", True), rtol=1e-12, atol=1e-12)
    check_grad(lambda a, b: a.scatter_add(dim, mt.tensor(index), b), x, src)
    # scatter proper: distinct places per column (a repeated place's winner is unspecified, as PyTorch's)
    perm = np.argsort(randn(seed + 2, shape), axis=dim)  # each column a permutation of the places
    unique = perm[tuple(slice(0, min(n, shape[dim]) if k == dim else n) for k, n in enumerate(index.shape))]
    src = src[tuple(slice(0, n) for n in unique.shape)]
    expected = scatter_reduce_ref(x, dim, unique, src, "sum", False)
    assert_close(mt.scatter(t64(x, False), dim, mt.tensor(unique), t64(src, False)), expected, rtol=1e-12)
    check_grad(lambda a, b: a.scatter(dim, mt.tensor(unique), b), x, src)


def test_scatter_value_reduce_and_in_place_forms():
    x = np.zeros((3, 4))
    index = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    y = mt.scatter(t64(x, False), 0, mt.tensor(index), 5.0)
    expected = np.zeros((3, 4))
    expected[index, np.arange(4)] = 5.0
    assert_close(y, expected)
    assert_close(mt.tensor(x).scatter(0, mt.tensor(index), value=2.0, reduce="add"),
                 scatter_reduce_ref(x, 0, index, np.full(index.shape, 2.0), "sum", True))
    assert_close(mt.ones(3, 4, dtype=mt.float64).scatter(0, mt.tensor(index), mt.full((2, 4), 3.0, dtype=mt.float64),
                                                         reduce="multiply"),
                 scatter_reduce_ref(np.ones((3, 4)), 0, index, np.full(index.shape, 3.0), "prod", True))
    t = mt.tensor(x)
    assert t.scatter_add_(0, mt.tensor(index), mt.ones(2, 4, dtype=mt.float64)) is t
    assert t.sum().item() == 8.0
    t.scatter_(1, mt.tensor([[3]]), -1.0)
    assert t[0, 3].item() == -1.0
    t.scatter_reduce_(0, mt.tensor([[0, 0, 0, 0]]), mt.full((1, 4), 9.0, dtype=mt.float64), "amax")
    assert_close(t[0], [9.0, 9.0, 9.0, 9.0])
    src = randn(0, (3, 5))  # a src larger than index: its leading block is used
    check_grad(lambda a: mt.zeros(3, 4, dtype=mt.float64).scatter(0, mt.tensor(index[:, :3]), a), src)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_with_zeros(include_self):
    """The gradient is the product of the other factors, also where a factor is 0 (not g * out / factor)."""
    x = np.array([0.0, 2.0, 3.0, 0.0])
    src = np.array([5.0, 0.0, 0.0, 7.0, 0.0])
    index = np.array([0, 1, 2, 2, 3])
    check_grad(lambda a, b: a.scatter_reduce(0, mt.tensor(index), b, "prod", include_self=include_self), x, src)
    X, S = t64(x), t64(src)
    X.scatter_reduce(0, mt.tensor(index), S, "prod", include_self=include_self).sum().backward()
    if include_self:
        assert_close(X.grad, [5.0, 0.0, 0.0, 0.0])
        assert_close(S.grad, [0.0, 2.0, 21.0, 0.0, 0.0])
    else:
        assert_close(S.grad, [1.0, 1.0, 7.0, 0.0, 1.0])


def test_integer_scatter_reduce_mean_floors():
    y = mt.tensor([0, 0]).scatter_reduce(0, mt.tensor([0, 0, 1]), mt.tensor([3, 4, -3]), "mean", include_self=False)
    assert y.tolist() == [3, -3] and y.dtype is mt.int64


@pytest.mark.parametrize("call, error, match", [
    (lambda: mt.zeros(3).scatter(0, mt.tensor([0.0]), 1.0), RuntimeError, "int32/int64 for index"),
    (lambda: mt.zeros(3).scatter(0, mt.tensor([3]), 1.0), RuntimeError, "out of bounds"),
    (lambda: mt.zeros(3).scatter(0, mt.tensor([-1]), 1.0), RuntimeError, "out of bounds"),
    (lambda: mt.zeros(3, 2).scatter(0, mt.tensor([1]), 1.0), RuntimeError, "same number of dimensions"),
    (lambda: mt.zeros(3).scatter_add(0, mt.tensor([1]), mt.ones(1, dtype=mt.float64)), RuntimeError, "dtype"),
    (lambda: mt.zeros(3).scatter_reduce(0, mt.tensor([1]), mt.ones(1), "max"), RuntimeError, "sum, prod, mean"),
    (lambda: mt.zeros(3).scatter(0, mt.tensor([1]), mt.ones(1), reduce="max"), RuntimeError, "add or multiply"),
    (lambda: mt.zeros(2, 2).scatter(1, mt.tensor([[0], [1], [0]]), 1.0), RuntimeError, "no larger than self"),
    (lambda: mt.zeros(3).masked_select(mt.tensor([1, 0, 1])), RuntimeError, "BoolTensor"),
    (lambda: mt.take_along_dim(mt.zeros(3), mt.tensor([0.0])), RuntimeError, "int32/int64"),
    (lambda: mt.take_along_dim(mt.zeros(3, 2), mt.tensor([0]), 0), RuntimeError, "same number of dimensions"),
])
def test_errors_are_pytorchs(call, error, match):
    with pytest.raises(error, match=match):
        call()


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=seeds, data=st.data())
def test_take_along_dim_broadcasts_as_numpy(shape, seed, data):
    x = randn(seed, shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    ishape = tuple(data.draw(st.sampled_from([1, n])) if k != dim else data.draw(st.integers(1, 4))
                   for k, n in enumerate(shape))
    index = data.draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, shape[dim] - 1)))
    expected = np.take_along_axis(x, np.broadcast_to(index, tuple(
        n if k != dim else index.shape[dim] for k, n in enumerate(shape))), dim)
    assert_close(mt.take_along_dim(t64(x, False), mt.tensor(index), dim), expected)
    flat = index.reshape(-1) % x.size
    assert_close(t64(x, False).take_along_dim(mt.tensor(flat)), x.reshape(-1)[flat])
    check_grad(lambda a: mt.take_along_dim(a, mt.tensor(index), dim), x)


@SETTINGS
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
                    elements=st.sampled_from([0.0, 1.5, -2.0])))
def test_nonzero_argwhere_masked_select_match_numpy(x):
    t = mt.tensor(x)
    assert_close(mt.nonzero(t), np.argwhere(x))
    assert mt.nonzero(t).dtype is mt.int64 and mt.argwhere(t).shape == np.argwhere(x).shape
    parts = t.nonzero(as_tuple=True)
    reference = np.nonzero(x) if x.ndim else (np.nonzero(x.reshape(1))[0],)
    assert len(parts) == len(reference)
    for p, r in zip(parts, reference):
        assert_close(p, r)
    mask = x > 0
    assert_close(t.masked_select(mt.tensor(mask)), x[mask])


def test_masked_select_broadcasts_with_gradient():
    x, mask = randn(0, (3, 1)), np.array([True, False, True, True])
    assert_close(mt.masked_select(t64(x, False), mt.tensor(mask)), np.broadcast_to(x, (3, 4))[:, mask].reshape(-1))
    check_grad(lambda a: mt.masked_select(a, mt.tensor(mask)), x)


@pytest.mark.torch
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_parity_with_torch(reduce, include_self):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, src, index = randn(0, (3, 4, 5)), randn(1, (2, 4, 5)), rng.integers(0, 3, (2, 4, 5))
    src[0, 0, 0] = x[index[0, 0, 0], 0, 0]  # a tie for amax / amin
    ours = [t64(x), t64(src)]
    theirs = [torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)]
    y = ours[0].scatter_reduce(0, mt.tensor(index), ours[1], reduce, include_self=include_self)
    ty = theirs[0].scatter_reduce(0, torch.tensor(index), theirs[1], reduce, include_self=include_self)
    assert_close(y, ty.detach().numpy(), rtol=1e-12)
    w = randn(2, (3, 4, 5))
    (y * mt.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad.numpy(), rtol=1e-10, atol=1e-12)
