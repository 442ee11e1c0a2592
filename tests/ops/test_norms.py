"""linalg.vector_norm / matrix_norm / norm vs np.linalg.norm float64 over shapes, dims and every ord, their
gradients by gradcheck, PyTorch's errors; torch parity where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64

L = mt.linalg
INF = float("inf")
MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, INF, -INF]


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=4), seed=seeds,
       ord=st.sampled_from(MATRIX_ORDS), keepdim=st.booleans(), data=st.data())
def test_matrix_norm_matches_numpy_with_gradient(shape, seed, ord, keepdim, data):
    a = randn(seed, shape)
    d0, d1 = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2, max_size=2,
                                unique_by=lambda d: d % len(shape)))
    expected = np.linalg.norm(np.moveaxis(a, (d0, d1), (-2, -1)), ord, axis=(-2, -1))
    if keepdim:
        expected = np.expand_dims(expected, tuple(sorted((d0 % len(shape), d1 % len(shape)))))
    assert_close(L.matrix_norm(t64(a, False), ord, (d0, d1), keepdim), expected, rtol=1e-9, atol=1e-12)
    check_grad(lambda x: L.matrix_norm(x, ord, (d0, d1), keepdim), a)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=seeds,
       ord=st.sampled_from([2, 1, 3, 0.5, INF, -INF, 0]), keepdim=st.booleans())
def test_vector_norm_matches_numpy(shape, seed, ord, keepdim):
    a = randn(seed, shape)
    expected = np.linalg.norm(a.reshape(-1), ord)
    y = L.vector_norm(t64(a, False), ord, keepdim=keepdim)
    assert_close(y, np.full((1,) * len(shape), expected) if keepdim else np.asarray(expected), rtol=1e-10)
    dim = len(shape) - 1
    assert_close(L.vector_norm(t64(a, False), ord, dim=dim), np.linalg.norm(a, ord, axis=dim), rtol=1e-10)
    if ord != 0:
        check_grad(lambda x: L.vector_norm(x, ord, dim=dim), a)


def test_norm_dispatches_as_pytorch():
    a = randn(0, (3, 4))
    A = t64(a, False)
    assert_close(L.norm(A), np.linalg.norm(a), rtol=1e-12)  # flattened 2-norm
    assert_close(L.norm(A, "nuc"), np.linalg.norm(a, "nuc"), rtol=1e-12)  # 2-D with ord: a matrix norm
    assert_close(L.norm(A, 2), np.linalg.norm(a, 2), rtol=1e-12)
    assert_close(L.norm(A, 3, dim=1), np.linalg.norm(a, 3, axis=1), rtol=1e-12)  # int dim: a vector norm
    assert_close(L.norm(A, INF, dim=(1, 0)), np.linalg.norm(a.T, INF), rtol=1e-12)
    assert_close(L.norm(t64(a[0], False), 1), np.linalg.norm(a[0], 1), rtol=1e-12)
    assert L.norm(mt.ones(2, 3), dtype=mt.float64).dtype is mt.float64


def test_gradient_of_the_norm_of_zero_is_zero():
    z = mt.zeros(3, requires_grad=True)
    L.vector_norm(z).backward()
    assert np.array_equal(z.grad.numpy(), np.zeros(3))


@pytest.mark.parametrize("call, error, match", [
    (lambda: L.vector_norm(mt.ones(3), "fro"), TypeError, "must be Number"),
    (lambda: L.matrix_norm(mt.ones(3, 4), 3), RuntimeError, "Order 3 not supported"),
    (lambda: L.matrix_norm(mt.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: L.matrix_norm(mt.ones(3, 3), dim=(0, -2)), RuntimeError, "dims must be different"),
    (lambda: L.norm(mt.ones(2, 2, 2), 2), RuntimeError, "must be 1D or 2D"),
    (lambda: L.norm(mt.ones(2, 2), dim=(0, 1, 1)), RuntimeError, "length 1 or 2"),
    (lambda: L.vector_norm(mt.ones(3, dtype=mt.int64)), RuntimeError, "floating point"),
    (lambda: L.vector_norm(mt.ones(0), -1), RuntimeError, "empty tensor"),
])
def test_errors_are_pytorchs(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.torch
@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_parity_with_torch(ord):
    torch = pytest.importorskip("torch")
    a = randn(1, (2, 3, 4))
    X, T = t64(a), torch.tensor(a, requires_grad=True)
    y, ty = L.matrix_norm(X, ord, dim=(0, 2)), torch.linalg.matrix_norm(T, ord, dim=(0, 2))
    assert_close(y, ty.detach().numpy(), rtol=1e-10)
    y.sum().backward()
    ty.sum().backward()
    assert_close(X.grad, T.grad.numpy(), rtol=1e-8, atol=1e-10)
    assert_close(L.norm(t64(a[0], False), ord), torch.linalg.norm(T[0].detach(), ord).numpy(), rtol=1e-10)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, INF, -INF])
def test_cond_matches_numpy(p):
    a = randn(0, (2, 3, 3)) + 2 * np.eye(3)
    assert_close(L.cond(t64(a, False), p), np.linalg.cond(a, p), rtol=1e-9)
    check_grad(lambda x: L.cond(x, p), a)
    if p in (None, 2):
        assert_close(L.cond(t64(a[0, :2], False), p), np.linalg.cond(a[0, :2], p), rtol=1e-9)  # not square


def test_torch_norm_takes_nuc_and_dtype():
    a = randn(0, (2, 3, 4))
    assert_close(mt.norm(t64(a[0], False), "nuc"), np.linalg.norm(a[0], "nuc"), rtol=1e-12)
    assert_close(t64(a, False).norm("nuc", dim=(1, 2)), np.linalg.norm(a, "nuc", axis=(1, 2)), rtol=1e-12)
    assert_close(t64(a, False).norm(p=None, dim=2), np.linalg.norm(a, axis=2), rtol=1e-12)
    assert_close(mt.norm(t64(a, False), 3, dim=(0, 2), keepdim=True),
                 (np.abs(a) ** 3).sum((0, 2), keepdims=True) ** (1 / 3), rtol=1e-12)
    assert mt.tensor(a, dtype=mt.float32).norm(dtype=mt.float64).dtype is mt.float64
    check_grad(lambda x: mt.norm(x, "nuc", dim=(0, 2)), a)
