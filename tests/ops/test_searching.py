"""unique, unique_consecutive, searchsorted, bucketize, bincount, histc, isin, count_nonzero and the one-argument
where, against NumPy references (and exact ones written here) over shapes with empty tensors, PyTorch's errors,
dtypes and graph rules; torch parity for every op and flag combination."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, as_np, assert_close, seeds

shapes0 = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)  # empty tensors too
small_ints = st.integers(-3, 3)


def ints(seed: int, shape: tuple[int, ...], low: int = -3, high: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).integers(low, high, shape)


def consecutive_reference(rows: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """(index of each run's first row, each row's run number, each run's length) of a (n, m) array."""
    firsts = [i for i in range(len(rows)) if i == 0 or not np.array_equal(rows[i], rows[i - 1])]
    run = np.cumsum([i in firsts for i in range(len(rows))]) - 1
    return firsts, run.tolist(), np.diff(firsts + [len(rows)]).tolist()


def torch_bisect(seq: list[float], value: float, right: bool) -> int:
    """PyTorch's CPU bisection for one value (its answer where nans break the order)."""
    lo, hi = 0, len(seq)
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if not (seq[mid] > value if right else seq[mid] >= value):
            lo = mid + 1
        else:
            hi = mid
    return lo


# ----------------------------------------------------------------------------------------------- unique
@SETTINGS
@given(shape=shapes0, seed=seeds, dtype=st.sampled_from([np.int64, np.float32, np.float64]))
def test_unique_matches_numpy(shape, seed, dtype):
    x = ints(seed, shape).astype(dtype)
    values, inverse, counts = mt.unique(mt.tensor(x), return_inverse=True, return_counts=True)
    ref, ref_inverse, ref_counts = np.unique(x, return_inverse=True, return_counts=True)
    assert values.dtype == mt.tensor(x).dtype and inverse.dtype is mt.int64 and counts.dtype is mt.int64
    assert_close(values, ref)
    assert_close(inverse, ref_inverse.reshape(shape))
    assert_close(counts, ref_counts)
    assert_close(mt.unique(mt.tensor(x), sorted=False), ref)  # sorted anyway, as PyTorch's CPU


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=seeds, data=st.data())
def test_unique_along_a_dim_matches_numpy(shape, seed, data):
    x = ints(seed, shape, 0, 2)  # few values: repeated slices
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    values, inverse, counts = mt.tensor(x).unique(True, True, True, dim)
    ref, ref_inverse, ref_counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    assert_close(values, ref)
    assert_close(inverse, ref_inverse.reshape(-1))
    assert_close(counts, ref_counts)


@SETTINGS
@given(shape=shapes0, seed=seeds, data=st.data())
def test_unique_consecutive_matches_the_runs(shape, seed, data):
    x = ints(seed, shape, 0, 2).astype(np.float32)
    dim = data.draw(st.none() | st.integers(0, len(shape) - 1)) if shape else None
    if dim is not None and 0 in shape and (shape.count(0) > 1 or shape[dim] != 0):
        return  # PyTorch's errors for these: test_unique_errors
    values, inverse, counts = mt.unique_consecutive(mt.tensor(x), return_inverse=True, return_counts=True,
                                                    dim=dim)
    moved = x.reshape(-1, 1) if dim is None else np.moveaxis(x, dim, 0)
    firsts, run, lengths = consecutive_reference(moved.reshape(len(moved), math.prod(moved.shape[1:])))
    assert_close(values, x.reshape(-1)[firsts] if dim is None else np.take(x, firsts, axis=dim))
    assert_close(inverse, np.array(run, dtype=np.int64).reshape(x.shape if dim is None else (-1,)))
    assert_close(counts, np.array(lengths, dtype=np.int64))


def test_unique_return_forms_nans_and_scalars():
    x = mt.tensor([3.0, 1.0, np.nan, 3.0, np.nan])
    assert isinstance(mt.unique(x), mt.Tensor)
    values, counts = mt.unique(x, return_counts=True)  # only what was asked, in PyTorch's order
    np.testing.assert_array_equal(as_np(values), [1.0, 3.0, np.nan, np.nan])  # every nan is its own value
    assert counts.tolist() == [1, 2, 1, 1]
    values, inverse = mt.unique(mt.tensor(5), return_inverse=True)  # a 0-d input: 1-D values, 0-d inverse
    assert values.shape == (1,) and inverse.shape == () and inverse.item() == 0
    assert mt.unique(mt.tensor([True, False, True])).tolist() == [False, True]
    for zeros, negative in (([0.0, -0.0, 0.0], False), ([-0.0, 0.0], True)):  # the first stands for both
        assert np.signbit(as_np(mt.unique(mt.tensor(zeros)))).tolist() == [negative]
    assert mt.unique(mt.tensor([2.0, 1.0], dtype=mt.bfloat16)).dtype is mt.bfloat16
    empty = mt.unique(mt.zeros(0, 3), return_inverse=True, return_counts=True)
    assert [tuple(t.shape) for t in empty] == [(0,), (0, 3), (0,)]
    empty = mt.unique(mt.zeros(3, 0), dim=1, return_inverse=True, return_counts=True)
    assert [tuple(t.shape) for t in empty] == [(3, 0), (0,), (0,)]


def test_unique_keeps_a_node_without_a_derivative_as_pytorch():
    x = mt.tensor([2.0, 1.0, 2.0], requires_grad=True)
    for op, name in ((lambda: mt.unique(x, return_inverse=True), "_unique2"),
                     (lambda: mt.unique(x, dim=0, return_counts=True), "unique_dim"),
                     (lambda: mt.unique_consecutive(x, return_counts=True), "unique_consecutive")):
        values, extra = op()
        assert values.requires_grad and values.grad_fn is not None and not extra.requires_grad
        with pytest.raises(NotImplementedError, match=f"the derivative for '{name}' is not implemented"):
            values.sum().backward()
    with mt.no_grad():
        assert not mt.unique(x).requires_grad


def test_unique_errors():
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        mt.unique(mt.tensor(1), dim=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.unique(mt.ones(2), dim=1)
    with pytest.raises(RuntimeError, match="aren't selected"):
        mt.unique_consecutive(mt.zeros(0, 3), dim=1)
    with pytest.raises(RuntimeError, match="more than one"):
        mt.unique(mt.zeros(0, 0), dim=0)
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.unique([1, 2])


# ------------------------------------------------------------------------------------ searchsorted
@SETTINGS
@given(batch=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), n=st.integers(0, 6),
       m=st.integers(0, 5), seed=seeds, right=st.booleans(), floats=st.booleans())
def test_searchsorted_matches_numpy_row_by_row(batch, n, m, seed, right, floats):
    seq = np.sort(ints(seed, batch + (n,)), axis=-1)  # small ints: ties between values and the sequence
    values = ints(seed + 1, batch + (m,)) + (0.5 if floats else 0)
    side = "right" if right else "left"
    got = mt.searchsorted(mt.tensor(seq), mt.tensor(values), right=right)
    rows = [np.searchsorted(s, v, side) for s, v in zip(seq.reshape(math.prod(batch), n),
                                                        values.reshape(math.prod(batch), m))]
    want = np.array(rows, dtype=np.int64).reshape(values.shape)
    assert got.dtype is mt.int64
    assert_close(got, want)
    assert_close(mt.searchsorted(mt.tensor(seq), mt.tensor(values), side=side, out_int32=True), want)
    if not batch:  # a 1-D sequence serves any input shape, numbers too
        assert_close(mt.bucketize(mt.tensor(values.reshape(-1, 1)), mt.tensor(seq), right=right),
                     np.searchsorted(seq, values.reshape(-1, 1), side))
        assert mt.searchsorted(mt.tensor(seq), 1.5, side=side).item() == np.searchsorted(seq, 1.5, side)


@SETTINGS
@given(seq=st.lists(st.sampled_from([0.0, 1.0, 2.0, np.nan, np.inf]), max_size=7).map(sorted),
       values=st.lists(st.sampled_from([-1.0, 0.0, 1.5, 2.0, np.nan, np.inf]), min_size=1, max_size=5),
       right=st.booleans(), batched=st.booleans())
def test_searchsorted_with_nans_follows_pytorchs_bisection(seq, values, right, batched):
    s, v = mt.tensor(seq, dtype=mt.float64), mt.tensor(values, dtype=mt.float64)
    got = mt.searchsorted(s[None] if batched else s, v[None] if batched else v, right=right)
    assert got.reshape(-1).tolist() == [torch_bisect(seq, x, right) for x in values]


def test_searchsorted_sorter_promotion_and_shapes():
    stored = mt.tensor([[5, 1, 3], [0, 9, 2]])
    got = mt.searchsorted(stored, mt.tensor([[2], [3]]), sorter=mt.tensor([[1, 2, 0], [0, 2, 1]]))
    assert got.tolist() == [[1], [2]]
    assert mt.searchsorted(mt.tensor([1, 3, 5, 7, 9]), 5.5).item() == 3  # promoted, not truncated to 5
    assert mt.searchsorted(mt.tensor([1.0, 3.0], dtype=mt.float16), mt.tensor([2.0])).tolist() == [1]
    assert mt.searchsorted(mt.tensor([1, 3]), mt.tensor(2)).shape == ()
    assert mt.searchsorted(mt.zeros(0, 3), mt.zeros(0, 2)).shape == (0, 2)
    assert mt.searchsorted(mt.zeros(2, 0), mt.zeros(2, 2)).tolist() == [[0, 0], [0, 0]]
    assert mt.bucketize(4, mt.tensor([1, 3, 5])).item() == 2
    assert mt.searchsorted(mt.tensor([1, 3]), np.int64(2)).item() == 1  # NumPy numbers are numbers
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    assert not mt.searchsorted(x, x).requires_grad


@pytest.mark.parametrize("call, error, match", [
    (lambda: mt.searchsorted(mt.tensor([1, 2]), mt.tensor([1]), side="middle"), RuntimeError, "'left' or 'right'"),
    (lambda: mt.searchsorted(mt.tensor([1, 2]), mt.tensor([1]), side="left", right=True), RuntimeError, "opposites"),
    (lambda: mt.searchsorted(mt.tensor(1), mt.tensor([1])), RuntimeError, "positive dimension"),
    (lambda: mt.searchsorted(mt.ones(2, 3), 1.0), RuntimeError, "can be a scalar only"),
    (lambda: mt.searchsorted(mt.ones(2, 3), mt.ones(1, 4)), RuntimeError, r"boundaries tensor \[2, 3\] and input"),
    (lambda: mt.searchsorted(mt.ones(2, 3), mt.ones(4)), RuntimeError, "first N-1 dimensions"),
    (lambda: mt.searchsorted(mt.tensor([1, 2]), mt.tensor([1]), sorter=mt.tensor([0])), RuntimeError, "same size"),
    (lambda: mt.searchsorted(mt.tensor([1, 2]), mt.tensor([1]), sorter=mt.tensor([0, 1], dtype=mt.int32)),
     RuntimeError, "long dtype but got dtype Int"),
    (lambda: mt.searchsorted(mt.tensor([1, 2]), mt.tensor([1]), sorter=mt.tensor([0, 2])), RuntimeError,
     "sorter index out of range"),
    (lambda: mt.searchsorted(mt.tensor([False, True]), mt.tensor([True])), NotImplementedError, "Bool"),
    (lambda: mt.searchsorted([1, 2], mt.tensor([1])), TypeError, "invalid combination"),
    (lambda: mt.bucketize(mt.tensor([1]), mt.ones(1, 2)), RuntimeError, r"must be 1 dimension, but got dim\(2\)"),
])
def test_searchsorted_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------------ bincount, histc
@SETTINGS
@given(counts=st.lists(st.integers(0, 9), max_size=12), minlength=st.integers(0, 12), seed=seeds,
       weight_dtype=st.sampled_from([None, mt.float32, mt.float64, mt.int64, mt.float16]))
def test_bincount_matches_numpy(counts, minlength, seed, weight_dtype):
    x = np.array(counts, dtype=np.int64)
    out = mt.bincount(mt.tensor(x), minlength=minlength)
    assert out.dtype is mt.int64 and out.tolist() == np.bincount(x, minlength=minlength).tolist()
    if weight_dtype is None:
        return
    w = mt.tensor(ints(seed, x.shape, -5, 6)).to(weight_dtype)
    got = mt.tensor(x).bincount(w, minlength)
    if not counts:  # PyTorch's empty input: int64 zeros whatever the weights
        assert got.dtype is mt.int64 and got.tolist() == [0] * minlength
        return
    assert got.dtype is (mt.float32 if weight_dtype is mt.float32 else mt.float64)
    assert_close(got, np.bincount(x, as_np(w).astype(np.float64), minlength=minlength))


def test_bincount_errors_and_graph():
    for bad, error, match in (([0, -1], RuntimeError, "non-negative"), ([[0, 1]], RuntimeError, "1-d"),
                              ([0.5], NotImplementedError, "'Float'"), ([True], NotImplementedError, "'Bool'")):
        with pytest.raises(error, match=match):
            mt.bincount(mt.tensor(bad))
    with pytest.raises(RuntimeError, match="minlength should be >= 0"):
        mt.bincount(mt.tensor([1]), minlength=-1)
    with pytest.raises(RuntimeError, match="same length as input"):
        mt.bincount(mt.tensor([1, 2]), mt.tensor([1.0]))
    w = mt.tensor([1.0, 2.0], requires_grad=True)
    out = mt.bincount(mt.tensor([1, 1]), w)
    assert out.requires_grad and out.tolist() == [0.0, 3.0]
    with pytest.raises(RuntimeError, match="derivative for aten::bincount is not implemented"):
        out.sum().backward()


def exact_histogram(x: np.ndarray, bins: int, low: float, high: float) -> list[int]:
    """Counts with exact rational bin arithmetic: bin floor((v - low) * bins / (high - low)), high in the last."""
    out = [0] * bins
    for v in x.reshape(-1).tolist():
        if low <= v <= high:
            out[min(math.floor((Fraction(v) - Fraction(low)) * bins / (Fraction(high) - Fraction(low))), bins - 1)] += 1
    return out


@SETTINGS
@given(shape=shapes0, seed=seeds, bins=st.integers(1, 12), bounds=st.tuples(small_ints, small_ints),
       dtype=st.sampled_from([mt.float32, mt.float64, mt.float16]))
def test_histc_matches_exact_bins(shape, seed, bins, bounds, dtype):
    x = ints(seed, shape, -20, 21) / 4  # quarters, integer bounds: every bin computation is exact
    low, high = sorted(bounds)
    if low == high:  # the data's range (widened by 1 either way when it has one value)
        low, high = (x.min(), x.max()) if x.size else (0.0, 0.0)
        low, high = (low - 1, high + 1) if low == high else (low, high)
        got = mt.histc(mt.tensor(x, dtype=dtype), bins)
    else:
        got = mt.tensor(x, dtype=dtype).histc(bins, low, high)
    assert got.dtype is dtype and got.shape == (bins,)
    assert got.tolist() == exact_histogram(x, bins, low, high)


def test_histc_ignores_nans_and_values_outside_and_has_no_graph():
    x = mt.tensor([np.nan, -np.inf, 0.0, 0.5, 1.0, 3.0, np.inf], requires_grad=True)
    got = mt.histc(x, bins=2, min=0, max=1)
    assert got.tolist() == [1.0, 2.0] and not got.requires_grad
    assert mt.histc(mt.tensor([2.0, 2.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]  # [1, 3]
    assert mt.histc(mt.zeros(0), bins=3).tolist() == [0.0, 0.0, 0.0]
    assert mt.histc(mt.tensor([0.25, 0.75], dtype=mt.bfloat16), bins=2, min=0, max=1).dtype is mt.bfloat16


@pytest.mark.parametrize("call, error, match", [
    (lambda: mt.histc(mt.tensor([1, 2]), bins=3), NotImplementedError, "'Long'"),
    (lambda: mt.histc(mt.tensor([True]), bins=3), NotImplementedError, "'Bool'"),
    (lambda: mt.histc(mt.ones(2), bins=0), RuntimeError, "bins must be > 0, but got 0"),
    (lambda: mt.histc(mt.ones(2), bins=2.0), TypeError, "must be int, not float"),
    (lambda: mt.histc(mt.ones(2), bins=3, min=3, max=1), RuntimeError, "max must be larger than min"),
    (lambda: mt.histc(mt.tensor([1.0, np.nan]), bins=3), RuntimeError, "is not finite"),
    (lambda: mt.histc(mt.ones(2), bins=3, min=0, max=np.inf), RuntimeError, r"range of \[0, inf\] is not finite"),
])
def test_histc_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --------------------------------------------------------------------------------- isin, count_nonzero
@SETTINGS
@given(shape=shapes0, test_shape=shapes0, seed=seeds, invert=st.booleans())
def test_isin_matches_numpy(shape, test_shape, seed, invert):
    a, t = ints(seed, shape), ints(seed + 1, test_shape).astype(np.float32)
    got = mt.isin(mt.tensor(a), mt.tensor(t), invert=invert)
    assert got.dtype is mt.bool and got.shape == shape
    assert np.array_equal(as_np(got), np.isin(a, t, invert=invert))
    assert mt.isin(mt.tensor(a), 2, assume_unique=True).tolist() == (a == 2).tolist()
    assert mt.isin(2, mt.tensor(t)).item() == bool((t == 2).any())


def test_isin_compares_in_the_promoted_dtype():
    assert mt.isin(mt.tensor([1, 2]), 1.5).tolist() == [False, False]  # 1.5 is not truncated to 1
    assert mt.isin(mt.tensor([44], dtype=mt.int8), mt.tensor([300])).tolist() == [False]
    assert mt.isin(mt.tensor([1, 3]), np.int64(3)).tolist() == [False, True]
    assert mt.isin(mt.tensor([np.nan, 1.0]), mt.tensor([np.nan, 1.0])).tolist() == [False, True]
    with pytest.raises(RuntimeError, match="Unsupported input type encountered for isin\\(\\): Bool"):
        mt.isin(mt.tensor([True]), mt.tensor([1]))
    with pytest.raises(TypeError, match="invalid combination"):
        mt.isin(2, 3)


@SETTINGS
@given(shape=shapes0, seed=seeds, data=st.data())
def test_count_nonzero_matches_numpy(shape, seed, data):
    x = ints(seed, shape, -1, 2).astype(np.float32)
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True)) if shape else []
    got = mt.count_nonzero(mt.tensor(x), tuple(dims) or None)
    assert got.dtype is mt.int64
    assert_close(got, np.count_nonzero(x, axis=tuple(dims) or None))
    if len(dims) == 1:
        assert_close(mt.tensor(x).count_nonzero(dims[0] - len(shape)), np.count_nonzero(x, axis=dims[0]))


def test_count_nonzero_rules():
    assert mt.count_nonzero(mt.tensor([np.nan, -0.0, True])).item() == 2  # nan counts, -0.0 does not
    assert mt.count_nonzero(mt.tensor(3.0), dim=0).item() == 1
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        mt.count_nonzero(mt.ones(2, 2), dim=(0, -2))
    with pytest.raises(IndexError, match="Dimension out of range"):
        mt.count_nonzero(mt.ones(2, 2), dim=2)
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        mt.count_nonzero([1, 0])


# --------------------------------------------------------------------------------------- where(cond)
@SETTINGS
@given(shape=shapes0, seed=seeds)
def test_where_of_a_condition_alone_is_nonzero_as_tuple(shape, seed):
    cond = ints(seed, shape, 0, 2)
    got = mt.where(mt.tensor(cond))
    want = np.nonzero(cond.reshape(-1) if cond.ndim == 0 else cond)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype is mt.int64 and g.tolist() == w.tolist()
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.where(cond.tolist())
    for missing in ((mt.tensor(1.0),), (None, None)):
        with pytest.raises(TypeError):
            mt.where(mt.tensor(cond), *missing)


def test_outputs_stay_on_the_inputs_device(device):
    x = mt.tensor([[3.0, 1.0], [3.0, 0.0]], device=device)
    i = mt.tensor([0, 2, 2], device=device)
    outs = [*mt.unique(x, return_inverse=True, return_counts=True), mt.unique_consecutive(x, dim=1),
            mt.searchsorted(mt.tensor([0.0, 2.0], device=device), x), mt.bucketize(1.0, x[0].sort().values),
            mt.bincount(i), mt.bincount(i, x.reshape(-1)[:3]), mt.histc(x, 3), mt.isin(x, 3.0),
            mt.count_nonzero(x, 0), *mt.where(x)]
    assert all(o.device == device for o in outs)
    assert mt.bincount(i, x.reshape(-1)[:3]).tolist() == [3.0, 0.0, 4.0]


# ---------------------------------------------------------------------------------------------- torch
def same(ours, theirs) -> None:
    """Equal values (nans in the same places), dtypes and shapes, tensor by tensor."""
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1] and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(as_np(a).astype(np.float64), b.detach().double().numpy())  # bfloat16 too
        assert a.requires_grad == b.requires_grad


@pytest.mark.torch
def test_every_op_and_flag_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, (4, 3)).astype(np.float32)
    x[1, 2] = np.nan
    pair = lambda a, **kw: (mt.tensor(a, **kw), torch.tensor(a, **kw))  # noqa: E731
    (a, ta), (g, tg) = pair(x), pair(x, requires_grad=True)
    for srt, inv, cnt, dim in itertools.product((True, False), (False, True), (False, True), (None, 0, 1, -1)):
        xs = (a, ta) if dim is None else pair(np.nan_to_num(x))
        same(mt.unique(xs[0], srt, inv, cnt, dim), torch.unique(xs[1], srt, inv, cnt, dim))
        kw = dict(return_inverse=inv, return_counts=cnt, dim=dim)  # torch.unique_consecutive misreads positional flags
        same(mt.unique_consecutive(xs[0], **kw), torch.unique_consecutive(xs[1], **kw))
        same(xs[0].unique_consecutive(inv, cnt, dim), xs[1].unique_consecutive(inv, cnt, dim))
    same(mt.unique(g, return_counts=True), torch.unique(tg, return_counts=True))
    same(mt.unique_consecutive(g), torch.unique_consecutive(tg))
    seq = np.sort(rng.integers(0, 5, (2, 6)), axis=1).astype(np.float64)
    seq[1, 4:] = np.nan
    for right, int32, side, sorter in itertools.product((False, True), (False, True), (None, "left", "right"),
                                                        (False, True)):
        if right and side == "left":
            continue
        perm = rng.permuted(np.tile(np.arange(6), (2, 1)), axis=1)
        s = np.take_along_axis(seq, perm, 1) if sorter else seq
        order = pair(np.argsort(perm, axis=1)) if sorter else (None, None)
        v = pair(np.array([[-1.0, 0.0, 2.0, 2.5, np.nan, 9.0]] * 2))
        kw = dict(right=right, out_int32=int32, side=side)
        same(mt.searchsorted(mt.tensor(s), v[0], sorter=order[0], **kw),
             torch.searchsorted(torch.tensor(s), v[1], sorter=order[1], **kw))
        same(mt.searchsorted(mt.tensor(s[0]), 2.0, **kw), torch.searchsorted(torch.tensor(s[0]), 2.0, **kw))
        same(mt.bucketize(v[0], mt.tensor(seq[0]), right=right, out_int32=int32),
             torch.bucketize(v[1], torch.tensor(seq[0]), right=right, out_int32=int32))
    idx = rng.integers(0, 6, 10)
    for dt, minlength in itertools.product((None, "float32", "float64", "int32", "float16"), (0, 9)):
        ws = pair(rng.standard_normal(10).astype(np.float32))
        mw, tw = (None, None) if dt is None else (ws[0].to(getattr(mt, dt)), ws[1].to(getattr(torch, dt)))
        ours, theirs = mt.bincount(mt.tensor(idx), mw, minlength), torch.bincount(torch.tensor(idx), tw, minlength)
        np.testing.assert_allclose(as_np(ours), theirs.numpy(), rtol=1e-6)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    h = rng.standard_normal(200).astype(np.float32)
    h[:3] = (np.nan, 5.0, -5.0)
    for dt, bins, lo, hi in itertools.product(("float32", "float64", "float16", "bfloat16"), (1, 7, 100),
                                              (0, -1.0), (0, 1.5)):
        hd = np.nan_to_num(h) if lo == hi else h
        same(mt.histc(mt.tensor(hd).to(getattr(mt, dt)), bins, lo, hi),
             torch.histc(torch.tensor(hd).to(getattr(torch, dt)), bins, lo, hi))
    e, t = pair(rng.integers(0, 6, (3, 4))), pair(np.array([1.0, 2.5, 4.0]))
    for invert, unique in itertools.product((False, True), (False, True)):
        same(mt.isin(e[0], t[0], invert=invert, assume_unique=unique),
             torch.isin(e[1], t[1], invert=invert, assume_unique=unique))
        same(mt.isin(e[0], 4, invert=invert), torch.isin(e[1], 4, invert=invert))
        same(mt.isin(2.5, t[0], invert=invert), torch.isin(2.5, t[1], invert=invert))
    for dim in (None, 0, 1, (0, 1), [1], ()):
        same(mt.count_nonzero(a, dim), torch.count_nonzero(ta, dim))
    for cond in (x, np.float32(0.0), np.zeros((0, 2))):
        same(mt.where(mt.tensor(cond)), torch.where(torch.tensor(cond)))
