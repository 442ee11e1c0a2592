"""roll, rot90, repeat_interleave, meshgrid, Tensor.unfold, diagonal / diag / diag_embed, tril_indices /
triu_indices vs NumPy float64 over shapes, gradcheck, PyTorch's errors and warnings; torch parity."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, as_np, assert_close, check_grad, randn, seeds, t64

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_roll_matches_numpy(shape, seed, data):
    x = randn(seed, shape)
    dims = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=len(shape),
                              unique_by=lambda d: d % len(shape)))
    shifts = data.draw(st.lists(st.integers(-6, 6), min_size=len(dims), max_size=len(dims)))
    assert_close(mt.roll(t64(x, False), shifts, dims), np.roll(x, shifts, dims))
    assert_close(t64(x, False).roll(shifts[0]), np.roll(x, shifts[0]))  # no dims: the flattened input
    check_grad(lambda a: a.roll(shifts, dims), x)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4), seed=seeds, k=st.integers(-5, 5))
def test_rot90_matches_numpy(shape, seed, k):
    x = randn(seed, shape)
    dims = (len(shape) - 1, 0)
    assert_close(mt.rot90(t64(x, False), k, dims), np.rot90(x, k, dims))
    check_grad(lambda a: a.rot90(k, dims), x)


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_repeat_interleave_matches_numpy_repeat(shape, seed, data):
    x = randn(seed, shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=shape[dim], max_size=shape[dim])))
    assert_close(t64(x, False).repeat_interleave(mt.tensor(counts), dim), np.repeat(x, counts, dim))
    assert_close(mt.repeat_interleave(t64(x, False), 2, dim=dim), np.repeat(x, 2, dim))
    assert_close(mt.repeat_interleave(t64(x, False), 2), np.repeat(x, 2))
    check_grad(lambda a: a.repeat_interleave(mt.tensor(counts), dim), x)
    y = mt.repeat_interleave(mt.tensor(counts))
    assert_close(y, np.repeat(np.arange(len(counts)), counts))
    assert y.dtype is mt.int64


@SETTINGS
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=seeds, indexing=st.sampled_from(["ij", "xy"]))
def test_meshgrid_matches_numpy(sizes, seed, indexing):
    xs = [randn(seed + i, (n,)) for i, n in enumerate(sizes)]
    grids = mt.meshgrid(*[t64(x, False) for x in xs], indexing=indexing)
    for g, ref in zip(grids, np.meshgrid(*xs, indexing=indexing)):
        assert_close(g, ref)
    weights = [randn(seed + 9, tuple(grids[0].shape)) * (k + 1) for k in range(len(xs))]
    check_grad(lambda *ts: sum((g * mt.tensor(w)).sum() for g, w in zip(mt.meshgrid(ts, indexing=indexing), weights)),
               *xs)


def test_meshgrid_warns_without_indexing_as_pytorch():
    a, b = mt.arange(3), mt.arange(2)
    with pytest.warns(UserWarning, match="indexing argument"):
        g = mt.meshgrid(a, b)
    assert g[0].shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mt.meshgrid(a, b, indexing="ij")
    with pytest.raises(RuntimeError, match="0D or 1D"):
        mt.meshgrid(mt.ones(2, 2), indexing="ij")


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_unfold_is_numpys_sliding_window(shape, seed, data):
    x = randn(seed, shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    size = data.draw(st.integers(0, shape[dim]))
    step = data.draw(st.integers(1, 3))
    ref = np.moveaxis(np.moveaxis(np.lib.stride_tricks.sliding_window_view(x, size, axis=dim), dim, 0)[::step], 0, dim)
    X = t64(x, False)
    y = X.unfold(dim, size, step)
    assert_close(y, ref)
    assert y.shape[dim] == (shape[dim] - size) // step + 1
    check_grad(lambda a: a.unfold(dim, size, step), x)


def test_unfold_is_a_view_and_checks_its_arguments():
    x = mt.arange(6.0)
    y = x.unfold(0, 2, 2)
    x[0] = 7.0
    assert y[0, 0].item() == 7.0
    assert mt.tensor(5.0).unfold(0, 1, 1).shape == (1,)
    with pytest.raises(RuntimeError, match="maximum size"):
        x.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step"):
        x.unfold(0, 2, 0)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=4), seed=seeds, offset=st.integers(-4, 4),
       data=st.data())
def test_diagonal_and_diag_embed_match_numpy(shape, seed, offset, data):
    x = randn(seed, shape)
    d1, d2 = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2, max_size=2,
                                unique_by=lambda d: d % len(shape)))
    assert_close(t64(x, False).diagonal(offset, d1, d2), np.diagonal(x, offset, d1, d2))
    check_grad(lambda a: mt.diagonal(a, offset, d1, d2), x)
    e = mt.diag_embed(t64(x, False), offset)
    n = shape[-1] + abs(offset)
    ref = np.zeros(shape[:-1] + (n, n))
    rows = np.arange(shape[-1]) + max(-offset, 0)
    ref[..., rows, rows + offset] = x
    assert_close(e, ref)
    check_grad(lambda a: a.diag_embed(offset, 0, -1), x)


def test_diagonal_is_a_writable_view():
    x = mt.zeros(3, 4)
    x.diagonal(1).add_(2.0)  # writes through, as PyTorch's
    assert_close(x, np.eye(3, 4, 1) * 2)
    y = mt.zeros(2, 2).expand(3, 2, 2)
    assert_close(y.diagonal(0, 1, 2), np.zeros((3, 2)))  # a broadcast input: a read-only view, still readable


def test_diag_of_vectors_and_matrices():
    v, m = randn(0, (3,)), randn(1, (3, 4))
    for k in (-2, 0, 1):
        assert_close(mt.diag(t64(v, False), k), np.diag(v, k))
        assert_close(t64(m, False).diag(k), np.diag(m, k))
    check_grad(lambda a: mt.diag(a, 1), v)
    check_grad(lambda a: mt.diag(a, -1), m)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        mt.diag(mt.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="cannot be identical"):
        mt.diagonal(mt.ones(2, 2), 0, 1, -1)


@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (3, 5, 1), (5, 3, -2), (4, 4, 10), (0, 3, 0), (2, 4, -5)])
def test_tril_triu_indices(row, col, offset):
    for f, ref in ((mt.tril_indices, np.tril_indices), (mt.triu_indices, np.triu_indices)):
        got = f(row, col, offset)
        assert got.dtype is mt.int64 and got.shape[0] == 2
        np.testing.assert_array_equal(as_np(got), np.stack(ref(row, offset, col)).reshape(2, -1))
    assert mt.tril_indices(3, 3, dtype=mt.int32).dtype is mt.int32
    with pytest.raises(RuntimeError):
        mt.tril_indices(-1, 3)


@pytest.mark.parametrize("call, match", [
    (lambda: mt.roll(mt.ones(3), (1, 2), 0), "must align"),
    (lambda: mt.rot90(mt.ones(3, 3), 1, (0, 0)), "different"),
    (lambda: mt.rot90(mt.ones(3), 1, (0, 1)), "total dims >= 2"),
    (lambda: mt.repeat_interleave(mt.ones(3), mt.tensor([1, 2]), 0), "same size as input"),
    (lambda: mt.repeat_interleave(mt.ones(3), -1), "negative"),
])
def test_errors_are_pytorchs(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


@pytest.mark.torch
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    x = randn(0, (3, 4, 5))
    cases = [
        (lambda a, m: a.roll((1, -2), (0, 2)), ()), (lambda a, m: m.rot90(a, 3, (2, 0)), ()),
        (lambda a, m: a.repeat_interleave(m.tensor([1, 0, 3]), dim=0), ()), (lambda a, m: a.unfold(2, 3, 2), ()),
        (lambda a, m: a.diagonal(-1, 2, 0), ()), (lambda a, m: m.diag_embed(a, 2, 0, 3), ()),
        (lambda a, m: m.meshgrid(a[0, 0], a[1, 1, :3], indexing="xy")[0] * 2 +
         m.meshgrid(a[0, 0], a[1, 1, :3], indexing="xy")[1], ()),
    ]
    for f, _ in cases:
        ours, theirs = t64(x), torch.tensor(x, requires_grad=True)
        y, ty = f(ours, mt), f(theirs, torch)
        assert_close(y, ty.detach().numpy())
        w = randn(1, tuple(ty.shape))
        (y * mt.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        assert_close(ours.grad, theirs.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(as_np(mt.triu_indices(4, 6, 1)), torch.triu_indices(4, 6, 1).numpy())
