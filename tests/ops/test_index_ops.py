"""index_add / index_copy / index_fill, take / put, select_scatter / slice_scatter / diagonal_scatter,
masked_scatter vs NumPy float64 references over shapes, gradcheck, PyTorch's errors; torch parity."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_index_add_copy_fill_match_numpy(shape, seed, data):
    x = randn(seed, shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    index = np.array(data.draw(st.lists(st.integers(0, shape[dim] - 1), min_size=1, max_size=5)))
    src = randn(seed + 1, shape[:dim] + (len(index),) + shape[dim + 1:])
    ref = x.copy()
    np.add.at(np.moveaxis(ref, dim, 0), index, np.moveaxis(src, dim, 0) * 2.0)
    assert_close(t64(x, False).index_add(dim, mt.tensor(index), t64(src, False), alpha=2.0), ref, rtol=1e-12)
    check_grad(lambda a, b: mt.index_add(a, dim, mt.tensor(index), b, alpha=2.0), x, src)
    unique = np.unique(index)
    usrc = np.take(src, np.arange(len(unique)), axis=dim)
    ref = x.copy()
    np.moveaxis(ref, dim, 0)[unique] = np.moveaxis(usrc, dim, 0)
    assert_close(mt.index_copy(t64(x, False), dim, mt.tensor(unique), t64(usrc, False)), ref)
    check_grad(lambda a, b: a.index_copy(dim, mt.tensor(unique), b), x, usrc)
    ref = x.copy()
    np.moveaxis(ref, dim, 0)[index] = -3.0
    assert_close(t64(x, False).index_fill(dim, mt.tensor(index), -3.0), ref)
    check_grad(lambda a: a.index_fill(dim, mt.tensor(index), -3.0), x)


@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_take_and_put_match_numpy(shape, seed, data):
    x = randn(seed, shape)
    n = x.size
    index = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=6)))
    assert_close(mt.take(t64(x, False), mt.tensor(index)), np.take(x, index))
    check_grad(lambda a: a.take(mt.tensor(index.reshape(-1, 1))), x)
    src = randn(seed + 1, index.shape)
    ref = x.copy().reshape(-1)
    np.add.at(ref, index, src)
    assert_close(mt.tensor(x).put(mt.tensor(index), mt.tensor(src), accumulate=True), ref.reshape(shape),
                 rtol=1e-12)
    check_grad(lambda a, b: a.put(mt.tensor(index), b, accumulate=True), x, src)
    unique = np.unique(index % n)
    ref = x.copy().reshape(-1)
    ref[unique] = src[:len(unique)]
    assert_close(mt.put(mt.tensor(x), mt.tensor(unique), mt.tensor(src[:len(unique)])), ref.reshape(shape))


def test_select_slice_diagonal_scatter():
    x, row, block, diag = randn(0, (3, 4)), randn(1, (4,)), randn(2, (3, 2)), randn(3, (3,))
    ref = x.copy()
    ref[-1] = row
    assert_close(mt.select_scatter(t64(x, False), t64(row, False), 0, -1), ref)
    check_grad(lambda a, b: a.select_scatter(b, 0, -1), x, row)
    ref = x.copy()
    ref[:, ::2] = block
    assert_close(mt.slice_scatter(t64(x, False), t64(block, False), 1, 0, None, 2), ref)
    check_grad(lambda a, b: mt.slice_scatter(a, b, 1, step=2), x, block)
    ref = x.copy()
    ref[np.arange(3), np.arange(3) + 1] = diag
    assert_close(mt.diagonal_scatter(t64(x, False), t64(diag, False), 1), ref)
    check_grad(lambda a, b: a.diagonal_scatter(b, 1), x, diag)
    with pytest.raises(RuntimeError, match="size equal to the diagonal"):
        mt.diagonal_scatter(mt.zeros(3, 4), mt.ones(2))


def test_masked_scatter():
    x, src = randn(0, (3, 4)), randn(1, (3, 4))
    mask = np.array([True, False, True, True])
    full = np.broadcast_to(mask, (3, 4))
    ref = x.copy()
    ref[full] = src.reshape(-1)[:full.sum()]
    assert_close(t64(x, False).masked_scatter(mt.tensor(mask), t64(src, False)), ref)
    check_grad(lambda a, b: mt.masked_scatter(a, mt.tensor(mask), b), x, src)
    with pytest.raises(RuntimeError, match="at least as many elements"):
        mt.masked_scatter(mt.zeros(3), mt.tensor([True, True, True]), mt.ones(2))
    with pytest.raises(RuntimeError, match="boolean masks"):
        mt.masked_scatter(mt.zeros(3), mt.tensor([1, 0, 1]), mt.ones(3))


def test_in_place_forms_and_errors():
    t = mt.zeros(3, 4)
    assert t.index_add_(1, mt.tensor([0, 0]), mt.ones(3, 2)) is t and t[0, 0].item() == 2.0
    t.index_fill_(0, mt.tensor([2]), 7.0).index_copy_(1, mt.tensor([3]), mt.full((3, 1), 5.0))
    assert t[2, 0].item() == 7.0 and t[:, 3].tolist() == [5.0, 5.0, 5.0]
    t.put_(mt.tensor([0]), mt.tensor([9.0]))
    t.masked_scatter_(mt.arange(12).reshape(3, 4) == 1, mt.tensor([8.0]))
    assert t[0, 0].item() == 9.0 and t[0, 1].item() == 8.0
    with pytest.raises(IndexError, match="out of range"):
        mt.take(mt.zeros(3, 4), mt.tensor([12]))
    with pytest.raises(RuntimeError, match="source shape"):
        mt.index_add(mt.zeros(3, 4), 1, mt.tensor([0, 1]), mt.ones(3, 3))


@pytest.mark.torch
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    x, src = randn(0, (3, 4)), randn(1, (3, 4))
    cases = [
        lambda m, a, b: a.index_add(1, m.tensor([0, 2, 0]), b[:, :3], alpha=-1.5),
        lambda m, a, b: a.index_fill(0, m.tensor([1]), 2.0) * b,
        lambda m, a, b: m.take(a, m.tensor([[-1, 3], [0, 0]])) + b[:2, :2],
        lambda m, a, b: a.put(m.tensor([1, 1, 5]), b[0, :3], accumulate=True),
        lambda m, a, b: m.diagonal_scatter(a, b[0, :3], 1),
        lambda m, a, b: a.masked_scatter(m.tensor([True, False, True, True]), b),
    ]
    for f in cases:
        ours, theirs = [t64(x), t64(src)], [torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)]
        y, ty = f(mt, *ours), f(torch, *theirs)
        assert_close(y, ty.detach().numpy(), rtol=1e-12)
        w = randn(2, tuple(ty.shape))
        (y * mt.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        for a, b in zip(ours, theirs):
            assert_close(a.grad, b.grad.numpy(), rtol=1e-12)
