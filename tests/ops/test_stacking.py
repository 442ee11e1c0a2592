"""hstack / vstack / dstack / column_stack, tensor_split / hsplit / vsplit / dsplit, atleast_Nd,
broadcast_tensors / broadcast_shapes, tile, ravel, flipud / fliplr, select, swapdims, moveaxis vs their NumPy
namesakes over shapes, gradcheck, PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)


@SETTINGS
@given(shape=shapes, seed=seeds)
def test_stacks_and_atleast_match_numpy(shape, seed):
    a, b = randn(seed, shape), randn(seed + 1, shape)
    for ours, ref in ((mt.hstack, np.hstack), (mt.vstack, np.vstack), (mt.dstack, np.dstack),
                      (mt.row_stack, np.vstack)):
        assert_close(ours([t64(a, False), t64(b, False)]), ref([a, b]))
        check_grad(lambda x, y: ours([x, y]), a, b)
    if len(shape) <= 2:
        assert_close(mt.column_stack([t64(a, False), t64(b, False)]), np.column_stack([a, b]))
    for ours, ref in ((mt.atleast_1d, np.atleast_1d), (mt.atleast_2d, np.atleast_2d), (mt.atleast_3d, np.atleast_3d)):
        assert_close(ours(t64(a, False)), ref(a))
        assert [tuple(t.shape) for t in ours(t64(a, False), t64(b, False))] == [r.shape for r in ref(a, b)]


@SETTINGS
@given(n=st.integers(1, 9), sections=st.integers(1, 5), seed=seeds,
       cuts=st.lists(st.integers(-10, 10), max_size=4))
def test_tensor_split_matches_numpy_array_split(n, sections, seed, cuts):
    x = randn(seed, (2, n))
    for got, ref in zip(mt.tensor_split(t64(x, False), sections, 1), np.array_split(x, sections, 1)):
        assert_close(got, ref)
    bounds = sorted(cuts)
    for got, ref in zip(t64(x, False).tensor_split(bounds, dim=1), np.split(x, bounds, 1)):
        assert got.shape == ref.shape
        assert_close(got, ref)
    check_grad(lambda a: mt.tensor_split(a, sections, 1)[0], x)


def test_hsplit_vsplit_dsplit():
    x = randn(0, (4, 6, 2))
    for ours, ref in ((mt.hsplit, np.hsplit), (mt.vsplit, np.vsplit), (mt.dsplit, np.dsplit)):
        for got, r in zip(ours(t64(x, False), 2), ref(x, 2)):
            assert_close(got, r)
    assert [tuple(t.shape) for t in mt.hsplit(mt.ones(6), [2, 3])] == [(2,), (1,), (3,)]
    with pytest.raises(RuntimeError, match="not divisible"):
        mt.hsplit(mt.ones(2, 4), 3)
    with pytest.raises(RuntimeError, match="at least 2 dimension"):
        mt.vsplit(mt.ones(4), 2)


@SETTINGS
@given(pair=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), seed=seeds)
def test_broadcast_tensors_and_shapes(pair, seed):
    (sa, sb), result = pair
    a, b = randn(seed, sa), randn(seed + 1, sb)
    assert mt.broadcast_shapes(sa, sb) == result
    for got, ref in zip(mt.broadcast_tensors(t64(a, False), t64(b, False)), np.broadcast_arrays(a, b)):
        assert_close(got, ref)
    check_grad(lambda x, y: mt.broadcast_tensors(x, y)[0] * mt.broadcast_tensors(x, y)[1], a, b)
    with pytest.raises(RuntimeError):
        mt.broadcast_shapes((2,), (3,))


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), seed=seeds,
       reps=st.lists(st.integers(1, 3), min_size=1, max_size=4))
def test_tile_ravel_flips_select_moveaxis(shape, seed, reps):
    x = randn(seed, shape)
    X = t64(x, False)
    assert_close(mt.tile(X, reps), np.tile(x, reps))
    assert_close(X.tile(*reps), np.tile(x, reps))
    check_grad(lambda a: mt.tile(a, reps), x)
    assert_close(mt.ravel(X), np.ravel(x))
    assert_close(mt.flipud(X), np.flipud(x))
    assert_close(X.select(0, -1), x[-1])
    check_grad(lambda a: a.select(0, 0), x)
    if x.ndim >= 2:
        assert_close(X.fliplr(), np.fliplr(x))
        assert_close(mt.swapdims(X, 0, -1), np.swapaxes(x, 0, -1))
        src, dst = [0, -1], [-1, 0] if x.ndim == 2 else [1, 0]
        assert_close(mt.moveaxis(X, src, dst), np.moveaxis(x, src, dst))
        check_grad(lambda a: a.moveaxis(src, dst), x)


def test_errors_are_pytorchs():
    for call, error, match in [(lambda: mt.fliplr(mt.ones(2)), RuntimeError, ">= 2-d"),
                               (lambda: mt.flipud(mt.tensor(1.0)), RuntimeError, ">= 1-d"),
                               (lambda: mt.select(mt.ones(2, 3), 1, 3), IndexError, "out of range"),
                               (lambda: mt.moveaxis(mt.ones(2, 3), (0, 1), (1,)), RuntimeError, "same number"),
                               (lambda: mt.tensor_split(mt.ones(3), 0), RuntimeError, "larger than 0")]:
        with pytest.raises(error, match=match):
            call()
