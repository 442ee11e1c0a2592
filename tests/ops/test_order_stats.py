"""median, nanmedian, kthvalue, mode, quantile, nanquantile: per-slice NumPy float64 references over shapes
(ties and nans included), gradients by gradcheck and PyTorch's tie and nan rules by known values, the
shapes, dtypes and errors, and PyTorch parity (values, indices, gradients) where torch is installed."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, nonscalar_shapes, randn, seeds

INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


def tied(seed, shape, nans):
    """Small integers (many ties), with some nans when asked."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape).astype(np.float64)
    if nans:
        x[rng.random(shape) < 0.2] = np.nan
    return x


def rows(x, axis):
    """x with ``axis`` last, as (slices, n), and a function putting per-slice results back."""
    moved = np.moveaxis(x, axis, -1)
    return moved.reshape(-1, moved.shape[-1]), lambda r: np.asarray(r).reshape(moved.shape[:-1])


def ref_pick(x, axis, position):
    """(values, indices): each slice's element at ``position(row)`` of its stable sort."""
    flat, back = rows(x, axis)
    idx = [np.argsort(r, kind="stable")[position(r)] for r in flat]
    return back([r[i] for r, i in zip(flat, idx)]), back(idx)


def median_pos(r):
    nans = int(np.isnan(r).sum())
    return len(r) - nans if nans else (len(r) - 1) // 2


def nanmedian_pos(r):
    k = int((~np.isnan(r)).sum())
    return max(k - 1, 0) // 2


def ref_mode(x, axis):
    """The smallest of the most frequent non-nan values at its last occurrence; the first nan of an all-nan
    slice."""
    flat, back = rows(x, axis)
    values, indices = [], []
    for r in flat:
        finite = r[~np.isnan(r)]
        if len(finite):
            uniq, counts = np.unique(finite, return_counts=True)
            values.append(uniq[np.argmax(counts)])
            indices.append(np.flatnonzero(r == values[-1])[-1])
        else:
            values.append(np.nan)
            indices.append(0)
    return back(values), back(indices)


def check_pick(got, values, indices, keepdim, axis):
    if keepdim:
        values, indices = np.expand_dims(values, axis), np.expand_dims(indices, axis)
    assert got.indices.dtype is mt.int64
    assert_close(got.values, values, rtol=0, atol=0)
    assert got.indices.numpy().tolist() == np.asarray(indices).tolist()


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data(), nans=st.booleans(), keepdim=st.booleans())
def test_order_statistics_along_a_dim_match_references(shape, seed, data, nans, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    axis = dim % len(shape)
    x = tied(seed, shape, nans)
    t = mt.tensor(x)
    check_pick(mt.median(t, dim, keepdim), *ref_pick(x, axis, median_pos), keepdim, axis)
    check_pick(t.nanmedian(dim, keepdim), *ref_pick(x, axis, nanmedian_pos), keepdim, axis)
    k = data.draw(st.integers(1, shape[axis]))
    check_pick(mt.kthvalue(t, k, dim, keepdim), *ref_pick(x, axis, lambda r: k - 1), keepdim, axis)
    check_pick(t.mode(dim, keepdim), *ref_mode(x, axis), keepdim, axis)


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data(), nans=st.booleans(), keepdim=st.booleans())
def test_quantiles_match_numpy(shape, seed, data, nans, keepdim):
    x = tied(seed, shape, nans) + randn(seed, shape) * 0.1
    dim = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    q = data.draw(st.floats(0, 1) | st.lists(st.floats(0, 1), min_size=0, max_size=3))
    method = data.draw(st.sampled_from(INTERPOLATIONS))
    axis = None if dim is None else dim % len(shape)
    qt = mt.tensor(q, dtype=mt.float64) if isinstance(q, list) else q
    for ours, ref in ((mt.quantile, np.quantile), (mt.nanquantile, np.nanquantile)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's note on all-nan slices
            expected = ref(x, np.asarray(q, dtype=np.float64), axis=axis, keepdims=keepdim, method=method)
        got = ours(mt.tensor(x), qt, dim, keepdim, interpolation=method)
        assert got.dtype is mt.float64
        assert_close(got, expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_gradients_go_to_the_picked_elements(shape, seed, data):
    x = randn(seed, shape)  # distinct values: each statistic is smooth around them
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(1, shape[dim]))
    check_grad(lambda t: mt.median(t, dim).values, x)
    check_grad(lambda t: mt.nanmedian(t, dim, keepdim=True).values, x)
    check_grad(lambda t: mt.kthvalue(t, k, dim).values, x)
    check_grad(lambda t: mt.mode(t, dim).values, x)
    check_grad(lambda t: mt.median(t), x)
    q = mt.tensor([0.0, 0.3, 0.5, 1.0], dtype=mt.float64)
    for method in INTERPOLATIONS:
        check_grad(lambda t: mt.quantile(t, q, dim, interpolation=method), x)
        check_grad(lambda t: mt.nanquantile(t, 0.7, None, True, interpolation=method), x)


def test_pytorch_tie_and_nan_rules_by_known_values():
    nan = float("nan")
    x = mt.tensor([3.0, 1.0, 2.0, 1.0], requires_grad=True)
    mt.median(x).backward()  # a whole tensor's median: the gradient shared by the tied elements
    assert x.grad.tolist() == [0.0, 0.5, 0.0, 0.5]
    x.grad = None
    m = mt.median(x, 0)  # along a dim: to the index returned, the 2nd of the stable sort (PyTorch's 3 too)
    m.values.backward()
    assert m.indices.item() == 3 and x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]
    y = mt.tensor([nan, 1.0, nan, 2.0], requires_grad=True)
    mt.median(y).backward()
    assert y.grad.tolist() == [0.5, 0.0, 0.5, 0.0]
    assert mt.median(mt.tensor([nan, 1.0, nan, 2.0, nan]), 0).indices.item() == 0  # the first nan
    assert mt.nanmedian(mt.tensor([nan, nan])).isnan().item()
    assert mt.nanmedian(mt.tensor([nan, 3.0, 1.0, 2.0]), 0).indices.item() == 3
    m = mt.mode(mt.tensor([[2.0, 1.0, 2.0, 1.0, 3.0, 1.0, 2.0], [0.0, 0.0, 5.0, 5.0, 1.0, 1.0, 1.0]]))
    assert m.values.tolist() == [1.0, 1.0] and m.indices.tolist() == [5, 6]
    assert mt.mode(mt.tensor([nan, nan, 1.0, 1.0, 1.0])).values.item() == 1.0  # nans are never equal
    z = mt.tensor([1.0, 3.0, 2.0, 4.0], requires_grad=True)
    mt.quantile(z, 0.4).backward()  # rank 1.2: 0.8 to the 2nd smallest, 0.2 to the 3rd
    assert_close(z.grad, [0.0, 0.2, 0.8, 0.0], rtol=1e-6)
    assert mt.quantile(mt.tensor([1.0, nan, 3.0]), 0.5).isnan().item()
    assert_close(mt.nanquantile(mt.tensor([1.0, nan, 3.0]), mt.tensor([0.0, 0.5])), [1.0, 2.0])
    assert mt.quantile(mt.tensor([0.0, 1, 2, 3, 4]), mt.tensor([0.125, 0.375, 0.625, 0.875]),
                       interpolation="nearest").tolist() == [0.0, 2.0, 2.0, 4.0]  # half to even


def test_shapes_dtypes_and_empty_tensors():
    x = mt.arange(6.0).reshape(2, 3)
    assert mt.quantile(x, mt.tensor([0.25, 0.5]), dim=1, keepdim=True).shape == (2, 2, 1)
    assert mt.quantile(x, mt.tensor([0.25, 0.5])).shape == (2,)
    assert mt.quantile(x, 0.5, keepdim=True).shape == (1, 1)
    assert mt.quantile(x, mt.tensor(0.5), 0).shape == (3,)
    assert mt.quantile(x, mt.tensor([]), 1).shape == (0, 2)
    assert mt.quantile(mt.tensor(3.0), mt.tensor([0.5]), 0, keepdim=True).tolist() == [3.0]
    s = mt.tensor(5.0)
    for got in (mt.median(s, 0), mt.mode(s), mt.kthvalue(s, 1), mt.median(s, 0, keepdim=True)):
        assert got.values.shape == () and got.indices.shape == () and got.indices.item() == 0
    i = mt.tensor([3, 1, 2])
    assert mt.median(i).dtype is mt.int64 and mt.median(i).item() == 2
    assert mt.median(i, 0).values.dtype is mt.int64 and mt.kthvalue(i, 1).values.item() == 1
    assert mt.mode(mt.tensor([True, False, True])).values.item() is True
    assert mt.median(mt.empty(0)).isnan().item() and mt.nanmedian(mt.empty(0)).isnan().item()
    e = mt.median(mt.empty(0, 3), 1, keepdim=True)
    assert e.values.shape == (0, 1) and e.indices.shape == (0, 1)
    assert mt.median(mt.tensor([1.0, 2.0], dtype=mt.bfloat16)).item() == 1.0
    assert type(mt.median(x, 1)) is mt.return_types.median and mt.median(x, 1).__match_args__ == ("values", "indices")


def test_errors():
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0 to have non-zero size"):
        mt.median(mt.empty(0, 3), 0)
    with pytest.raises(IndexError, match=r"mode\(\): Expected reduction dim 0 to have non-zero size"):
        mt.mode(mt.empty(0))
    with pytest.raises(IndexError, match="kthvalue"):
        mt.kthvalue(mt.empty(0), 1)
    for k in (0, 4):
        with pytest.raises(RuntimeError, match="selected number k out of range for dimension 0"):
            mt.kthvalue(mt.ones(3), k)
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        mt.median(mt.tensor([True]))
    with pytest.raises(NotImplementedError, match="kthvalue_cpu"):
        mt.kthvalue(mt.tensor([True]), 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.median(mt.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match=r"q must be in the range \[0, 1\] but got 1.5"):
        mt.quantile(mt.ones(3), 1.5)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        mt.quantile(mt.ones(3), mt.tensor([0.5, -0.1]))
    with pytest.raises(RuntimeError, match="must be either float or double dtype"):
        mt.quantile(mt.ones(3, dtype=mt.int64), 0.5)
    with pytest.raises(RuntimeError, match="must be either float or double dtype"):
        mt.nanquantile(mt.ones(3, dtype=mt.float16), 0.5)
    with pytest.raises(RuntimeError, match="q must be a scalar or 1D tensor"):
        mt.quantile(mt.ones(3), mt.ones(2, 2) * 0.5)
    with pytest.raises(RuntimeError, match="q tensor must be same dtype as the input tensor"):
        mt.quantile(mt.ones(3), mt.tensor([0.5], dtype=mt.float64))
    with pytest.raises(RuntimeError, match="input tensor must be non-empty"):
        mt.quantile(mt.empty(0, 3), 0.5, 1)
    with pytest.raises(RuntimeError, match="interpolation must be one of linear"):
        mt.quantile(mt.ones(3), 0.5, interpolation="foo")
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.median([1.0, 2.0])


@pytest.mark.torch
def test_order_statistics_match_pytorch():
    torch = pytest.importorskip("torch")
    x = randn(3, (4, 7))  # distinct values: PyTorch's index of tied values is its own
    x[1, 2] = np.nan
    for name, args in (("median", (1,)), ("nanmedian", (1,)), ("kthvalue", (3, 1)), ("mode", (0,)),
                       ("median", (0, True))):
        a, b = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ours, theirs = getattr(mt, name)(a, *args), getattr(torch, name)(b, *args)
        assert_close(ours.values, theirs.values.detach().numpy(), rtol=0, atol=0)
        assert ours.indices.tolist() == theirs.indices.tolist()
        w = randn(4, tuple(ours.values.shape))
        (mt.where(ours.values.isnan(), 0.0, ours.values) * mt.tensor(w)).sum().backward()
        (theirs.values.nan_to_num() * torch.tensor(w)).sum().backward()
        assert_close(a.grad, b.grad.numpy(), rtol=0, atol=0)
    for name in ("quantile", "nanquantile"):
        for method in INTERPOLATIONS:
            q = [0.0, 0.1, 0.5, 0.77, 1.0]
            a, b = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            ours = getattr(mt, name)(a, mt.tensor(q, dtype=mt.float64), 1, True, interpolation=method)
            theirs = getattr(torch, name)(b, torch.tensor(q, dtype=torch.float64), 1, True, interpolation=method)
            assert_close(ours, theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
            w = randn(5, tuple(ours.shape))
            (mt.where(ours.isnan(), 0.0, ours) * mt.tensor(w)).sum().backward()
            (theirs.nan_to_num() * torch.tensor(w)).sum().backward()
            assert_close(a.grad, b.grad.numpy(), rtol=1e-12, atol=1e-12)
    t = np.array([3.0, 1.0, 2.0, 1.0, 2.0, 1.0])
    a, b = mt.tensor(t, requires_grad=True), torch.tensor(t, requires_grad=True)
    mt.median(a).backward()
    torch.median(b).backward()
    assert a.grad.tolist() == b.grad.tolist()
