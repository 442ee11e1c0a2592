"""linalg.inv / solve / det / slogdet / matrix_power (and mt.inverse, logdet, Tensor methods) vs np.linalg
float64 over batch shapes, gradcheck, PyTorch's errors; torch parity where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, randn, seeds, t64

L = mt.linalg
batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
sizes = st.integers(1, 4)


def well_conditioned(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """Random square matrices pushed away from singular (a multiple of I added)."""
    return randn(seed, shape) + 3 * np.eye(shape[-1])


@SETTINGS
@given(batch=batches, n=sizes, seed=seeds)
def test_inv_det_slogdet_match_numpy_with_gradients(batch, n, seed):
    a = well_conditioned(seed, batch + (n, n))
    a[..., 0, :] *= -1  # negative determinants too
    A = t64(a, False)
    assert_close(L.inv(A), np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    assert_close(mt.inverse(A), np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    assert_close(L.det(A), np.linalg.det(a), rtol=1e-10)
    sign, logabsdet = L.slogdet(A)
    assert_close(sign, np.linalg.slogdet(a)[0])
    assert_close(logabsdet, np.linalg.slogdet(a)[1], rtol=1e-10, atol=1e-12)
    check_grad(L.inv, a)
    check_grad(L.det, a)
    check_grad(lambda x: L.slogdet(x).logabsdet, a)


@SETTINGS
@given(batch_a=batches, batch_b=batches, n=sizes, k=st.integers(1, 3), seed=seeds)
def test_solve_broadcasts_batches_and_matches_numpy(batch_a, batch_b, n, k, seed):
    batch_b = batch_b[len(batch_b) - min(len(batch_b), len(batch_a)):]  # a suffix of batch_a's rank
    batch_b = tuple(x if x == y or x == 1 else y for x, y in zip(batch_b, batch_a[len(batch_a) - len(batch_b):]))
    a, b = well_conditioned(seed, batch_a + (n, n)), randn(seed + 1, batch_b + (n, k))
    assume(b.shape != a.shape[:-1])  # that B is a batch of vectors (PyTorch's rule): the next test
    x = L.solve(t64(a, False), t64(b, False))
    assert_close(x, np.linalg.solve(a, np.broadcast_to(b, np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (n, k))),
                 rtol=1e-9, atol=1e-10)
    check_grad(L.solve, a, b)


def test_solve_vector_right_side_and_left_false():
    a, v, bm = randn(0, (2, 3, 3)) + 3 * np.eye(3), randn(1, (2, 3)), randn(2, (4, 3))
    x = L.solve(t64(a, False), t64(v, False))  # B.shape == A.shape[:-1]: a batch of vectors
    assert x.shape == (2, 3)
    assert_close(x, np.linalg.solve(a, v[..., None])[..., 0], rtol=1e-10)
    assert_close(L.solve(t64(a[0], False), t64(v[0], False)), np.linalg.solve(a[0], v[0]), rtol=1e-10)
    xr = L.solve(t64(a[0], False), t64(bm, False), left=False)  # X A = B
    assert_close(xr @ t64(a[0], False), bm, rtol=1e-10, atol=1e-12)
    check_grad(lambda p, q: L.solve(p, q, left=False), a[0], bm)
    check_grad(L.solve, a, v)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power(n):
    a = randn(0, (2, 3, 3)) + 2 * np.eye(3)
    y = L.matrix_power(t64(a, False), n)
    assert_close(y, np.linalg.matrix_power(a, n), rtol=1e-9, atol=1e-12)
    assert_close(t64(a, False).matrix_power(n), np.linalg.matrix_power(a, n), rtol=1e-9, atol=1e-12)
    if n:
        check_grad(lambda x: L.matrix_power(x, n), a)
    A = t64(a, False)
    assert L.matrix_power(A, 1) is not A


@pytest.mark.parametrize("a", [np.ones((3, 3)), np.diag([2.0, 0.0, 3.0]), np.zeros((2, 2)),
                               np.array([[1.0, 2.0], [2.0, 4.0]]), np.zeros((2, 1, 1))])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(a):
    check_grad(L.det, a)
    A = t64(a)
    L.det(A).sum().backward()
    if a.shape[-1] == 2:  # the adjugate's transpose: [[d, -c], [-b, a]]
        assert_close(A.grad, np.stack([[a[..., 1, 1], -a[..., 1, 0]], [-a[..., 0, 1], a[..., 0, 0]]]), atol=1e-12)


def test_tensor_methods_and_logdet():
    a = randn(3, (3, 3)) + 3 * np.eye(3)
    A = t64(a, False)
    assert_close(A.det(), np.linalg.det(a), rtol=1e-12)
    assert_close(A.inverse(), np.linalg.inv(a), rtol=1e-10)
    assert_close(A.slogdet().logabsdet, np.linalg.slogdet(a)[1], rtol=1e-12)
    assert_close(mt.logdet(A), np.log(np.linalg.det(a)), rtol=1e-10)
    neg = t64(np.diag([-1.0, 2.0]), False)
    assert np.isnan(mt.logdet(neg).item()) and mt.logdet(t64(np.zeros((2, 2)), False)).item() == -np.inf
    assert mt.det(t64(np.ones((3, 3)), False)).item() == pytest.approx(0.0, abs=1e-12)  # singular: no error
    assert L.inv(mt.eye(3)).dtype is mt.float32 and L.det(mt.eye(3)).dtype is mt.float32


@pytest.mark.parametrize("call, error, match", [
    (lambda: L.inv(mt.zeros(3, 3)), L.LinAlgError, "singular"),
    (lambda: L.solve(mt.zeros(2, 2), mt.ones(2)), L.LinAlgError, "singular"),
    (lambda: L.inv(mt.ones(2, 3)), RuntimeError, "square matrices, but they are 2 by 3"),
    (lambda: L.inv(mt.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: L.det(mt.ones(2, 2, dtype=mt.int64)), RuntimeError, "floating point"),
    (lambda: L.inv(mt.ones(2, 2, dtype=mt.float16)), RuntimeError, "Low precision"),
    (lambda: L.solve(mt.eye(3), mt.ones(2, 1)), RuntimeError, "Incompatible shapes"),
    (lambda: L.solve(mt.eye(3), mt.ones(3, dtype=mt.float64)), RuntimeError, "same dtype"),
    (lambda: L.inv([[1.0]]), TypeError, "must be Tensor"),
    (lambda: L.matrix_power(mt.eye(2), 1.5), TypeError, "must be int"),
])
def test_errors_are_pytorchs(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_linalg_error_is_a_runtime_error():
    with pytest.raises(RuntimeError):
        L.inv(mt.zeros(2, 2))


@pytest.mark.torch
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    a, b = randn(0, (2, 3, 3)) + 2 * np.eye(3), randn(1, (2, 3, 2))
    for ours, theirs, args in [(L.inv, torch.linalg.inv, (a,)), (L.det, torch.linalg.det, (a,)),
                               (L.solve, torch.linalg.solve, (a, b)), (mt.logdet, torch.logdet, (a,)),
                               (lambda x: L.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1], (a,)),
                               (lambda x: L.matrix_power(x, -3), lambda x: torch.linalg.matrix_power(x, -3), (a,))]:
        xs, ts = [t64(x) for x in args], [torch.tensor(x, requires_grad=True) for x in args]
        y, ty = ours(*xs), theirs(*ts)
        assert_close(y, ty.detach().numpy(), rtol=1e-10, atol=1e-12)
        y.sum().backward()
        ty.sum().backward()
        for x, t in zip(xs, ts):
            assert_close(x.grad, t.grad.numpy(), rtol=1e-9, atol=1e-10)
    assert issubclass(torch.linalg.LinAlgError, RuntimeError)
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(torch.zeros(2, 2))


@SETTINGS
@given(batch=batches, n=sizes, k=st.integers(1, 3), seed=seeds, upper=st.booleans(), left=st.booleans(),
       unit=st.booleans())
def test_solve_triangular_reads_one_triangle(batch, n, k, seed, upper, left, unit):
    a = randn(seed, batch + (n, n)) + 3 * np.eye(n)
    b = randn(seed + 1, batch + ((n, k) if left else (k, n)))
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri = tri - tri * np.eye(n) + np.eye(n)
    x = L.solve_triangular(t64(a, False), t64(b, False), upper=upper, left=left, unitriangular=unit)
    assert_close(x, np.linalg.solve(tri, b) if left else np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2),
                                                                                   np.swapaxes(b, -1, -2)), -1, -2),
                 rtol=1e-9, atol=1e-10)
    check_grad(lambda p, q: L.solve_triangular(p, q, upper=upper, left=left, unitriangular=unit), a, b)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    m = randn(0, (2, 3, 3))
    s = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)
    b = randn(1, (2, 3, 2))
    factor = L.cholesky(t64(s, False), upper=upper)
    assert_close(mt.cholesky_solve(t64(b, False), factor, upper=upper), np.linalg.solve(s, b), rtol=1e-9)
    assert_close(factor.cholesky_inverse(upper), np.linalg.inv(s), rtol=1e-9, atol=1e-12)
    check_grad(lambda q, f: mt.cholesky_solve(q, f.tril() if not upper else f.triu(), upper=upper), b,
               np.linalg.cholesky(s) if not upper else np.swapaxes(np.linalg.cholesky(s), -1, -2))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        L.solve_triangular(mt.eye(2), mt.ones(2), upper=True)
