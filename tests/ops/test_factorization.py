"""linalg.cholesky / eigh / eigvalsh / svd / svdvals / qr / pinv vs np.linalg float64 over batch shapes, their
gradients by gradcheck (through functions of the factors that do not depend on sign choices), PyTorch's errors
and, where torch is installed, values and gradients against torch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, as_np, assert_close, check_grad, randn, seeds, t64

L = mt.linalg
batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
sizes = st.integers(1, 4)


def spd(x: mt.Tensor) -> mt.Tensor:
    return x @ x.transpose(-2, -1) + x.shape[-1] * mt.eye(x.shape[-1], dtype=x.dtype)


def sym(x: mt.Tensor) -> mt.Tensor:
    return x + x.transpose(-2, -1)


def mT(a: np.ndarray) -> np.ndarray:
    return a.swapaxes(-1, -2)


@SETTINGS
@given(batch=batches, n=sizes, seed=seeds, upper=st.booleans())
def test_cholesky_matches_numpy_with_gradient(batch, n, seed, upper):
    a = randn(seed, batch + (n, n))
    s = a @ mT(a) + n * np.eye(n)
    ref = np.linalg.cholesky(s)
    assert_close(L.cholesky(t64(s, False), upper=upper), mT(ref) if upper else ref, rtol=1e-10, atol=1e-12)
    check_grad(lambda x: L.cholesky(spd(x), upper=upper), a)


@SETTINGS
@given(batch=batches, n=sizes, seed=seeds, uplo=st.sampled_from(["L", "U"]))
def test_eigh_matches_numpy_with_gradients(batch, n, seed, uplo):
    a = randn(seed, batch + (n, n))
    w, v = L.eigh(t64(a, False), UPLO=uplo)  # a is not symmetric: only its UPLO triangle is read
    ref_w, ref_v = np.linalg.eigh(a, uplo)
    assert_close(w, ref_w, rtol=1e-9, atol=1e-10)
    assert_close(L.eigvalsh(t64(a, False), UPLO=uplo), ref_w, rtol=1e-9, atol=1e-10)
    assert_close(abs(np.sum(as_np(v) * ref_v, axis=-2)), np.ones(batch + (n,)), rtol=1e-8)  # same columns up to sign
    check_grad(lambda x: L.eigvalsh(sym(x)), a)
    check_grad(lambda x: L.eigh(sym(x)).eigenvalues, a)
    check_grad(lambda x: L.eigh(sym(x)).eigenvectors ** 2, a)  # squares: independent of each column's sign


@SETTINGS
@given(batch=batches, m=sizes, n=sizes, seed=seeds, full=st.booleans())
def test_svd_matches_numpy_with_gradients(batch, m, n, seed, full):
    a = randn(seed, batch + (m, n))
    u, s, vh = L.svd(t64(a, False), full_matrices=full)
    k = min(m, n)
    assert u.shape == batch + (m, m if full else k) and vh.shape == batch + (n if full else k, n)
    assert_close(s, np.linalg.svd(a, compute_uv=False), rtol=1e-9, atol=1e-12)
    assert_close(L.svdvals(t64(a, False)), np.linalg.svd(a, compute_uv=False), rtol=1e-9, atol=1e-12)
    assert_close((u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :], a, rtol=1e-9, atol=1e-10)
    check_grad(L.svdvals, a)
    # U diag(S) V^T and the sign-free |U|, |Vh| (the singular values of a random matrix are distinct)
    check_grad(lambda x: (lambda f: (f.U[..., :k] * f.S.unsqueeze(-2)) @ f.Vh[..., :k, :] + f.U[..., :k].abs().sum()
                          + f.Vh[..., :k, :].abs().sum())(L.svd(x, full_matrices=full)), a)


@SETTINGS
@given(batch=batches, m=sizes, n=sizes, seed=seeds, mode=st.sampled_from(["reduced", "complete", "r"]))
def test_qr_matches_numpy_with_gradients(batch, m, n, seed, mode):
    a = randn(seed, batch + (m, n))
    q, r = L.qr(t64(a, False), mode=mode)
    ref_r = np.linalg.qr(a, mode="r" if mode == "r" else mode)
    ref_r = ref_r if mode == "r" else ref_r[1]
    assert_close(abs(r), abs(ref_r), rtol=1e-9, atol=1e-10)
    if mode == "r":
        assert q.shape == (0,)
        return
    assert_close(q @ r, a, rtol=1e-9, atol=1e-10)
    if mode == "complete" and m > n:
        return  # not differentiable, as in PyTorch (test_qr_errors)
    check_grad(lambda x: (lambda f: f.Q.sum() + f.R.sum())(L.qr(x, mode=mode)), a)


@SETTINGS
@given(batch=batches, m=sizes, n=sizes, seed=seeds)
def test_pinv_matches_numpy_with_gradient(batch, m, n, seed):
    a = randn(seed, batch + (m, n))
    assert_close(L.pinv(t64(a, False)), np.linalg.pinv(a), rtol=1e-8, atol=1e-10)
    assert_close(mt.pinverse(t64(a, False)), np.linalg.pinv(a), rtol=1e-8, atol=1e-10)
    check_grad(L.pinv, a)
    s = a[..., :m] if m <= n else a[..., :n, :]
    assert_close(L.pinv(sym(t64(s, False)), hermitian=True), np.linalg.pinv(mT(s) + s, hermitian=True), rtol=1e-7,
                 atol=1e-9)


def test_pinv_of_a_rank_deficient_matrix_drops_small_singular_values():
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])  # rank 1
    assert_close(L.pinv(t64(a, False)), np.linalg.pinv(a), rtol=1e-10, atol=1e-12)
    assert_close(L.pinv(t64(a, False), atol=100.0), np.zeros((2, 3)))
    y = L.pinv(t64(a))
    y.sum().backward()  # no 1/0 from the dropped singular value
    assert np.isfinite(y.detach().numpy()).all()


@pytest.mark.parametrize("call, error, match", [
    (lambda: L.cholesky(-mt.eye(2)), L.LinAlgError, "positive-definite"),
    (lambda: L.cholesky(mt.ones(2, 3)), RuntimeError, "square matrices"),
    (lambda: L.eigh(mt.eye(2), UPLO="X"), RuntimeError, "'L' or 'U'"),
    (lambda: L.qr(mt.eye(2), mode="full"), RuntimeError, "unrecognized mode"),
    (lambda: L.svd(mt.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: L.svdvals(mt.ones(2, 2, dtype=mt.int32)), RuntimeError, "floating point"),
])
def test_errors_are_pytorchs(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("mode, shape, match", [("r", (3, 2), "mode='r'"), ("complete", (3, 2), "nrows > ncols")])
def test_qr_errors(mode, shape, match):
    q, r = L.qr(t64(randn(0, shape)), mode=mode)
    with pytest.raises(RuntimeError, match=match):
        r.sum().backward()


def test_float32_results():
    a = mt.randn(3, 3)
    assert L.svd(a).S.dtype is mt.float32 and L.eigh(a).eigenvectors.dtype is mt.float32
    assert L.qr(a).Q.dtype is mt.float32 and L.cholesky(spd(a)).dtype is mt.float32


@pytest.mark.torch
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    a = randn(0, (2, 4, 3))
    sq = randn(1, (2, 3, 3))
    cases = [
        (lambda x: L.svdvals(x), lambda x: torch.linalg.svdvals(x), a),
        (lambda x: L.pinv(x), lambda x: torch.linalg.pinv(x), a),
        (lambda x: L.cholesky(spd(x), upper=True), lambda x: torch.linalg.cholesky(
            x @ x.mT + 3 * torch.eye(3, dtype=x.dtype), upper=True), sq),
        (lambda x: L.eigh(x).eigenvectors.abs() + L.eigh(x).eigenvalues.unsqueeze(-1),
         lambda x: torch.linalg.eigh(x).eigenvectors.abs() + torch.linalg.eigh(x).eigenvalues.unsqueeze(-1), sq),
        (lambda x: L.svd(x, full_matrices=False).U.abs() + L.svd(x, full_matrices=False).Vh.abs().sum(),
         lambda x: torch.linalg.svd(x, full_matrices=False).U.abs() + torch.linalg.svd(
             x, full_matrices=False).Vh.abs().sum(), a),
        (lambda x: (lambda f: f.Q @ f.R.abs())(L.qr(x)), lambda x: (lambda f: f.Q @ f.R.abs())(torch.linalg.qr(x)),
         a),
    ]
    for ours, theirs, x in cases:
        X, T = t64(x), torch.tensor(x, requires_grad=True)
        y, ty = ours(X), theirs(T)
        assert_close(y, ty.detach().numpy(), rtol=1e-9, atol=1e-10)
        y.sum().backward()
        ty.sum().backward()
        assert_close(X.grad, T.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_matrix_rank_and_linalg_diagonal():
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5]) + np.outer([0.0, 1.0, 1.0], [1.0, 1.0, 1.0])  # rank 2
    assert L.matrix_rank(t64(a, False)).item() == 2 and L.matrix_rank(t64(a, False)).dtype is mt.int64
    assert L.matrix_rank(t64(a + a.T, False), hermitian=True).item() == np.linalg.matrix_rank(a + a.T)
    assert L.matrix_rank(t64(a, False), atol=1e3).item() == 0
    assert_close(L.matrix_rank(t64(np.stack([a, np.eye(3)]), False)), [2, 3])
    x = randn(0, (2, 3, 4))
    assert_close(L.diagonal(t64(x, False), offset=1), np.diagonal(x, 1, -2, -1))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_the_older_torch_svd_and_qr(shape):
    a = randn(0, shape)
    u, s, v = mt.svd(t64(a, False))
    k = min(shape[-2:])
    assert v.shape == shape[:-2] + (shape[-1], k)
    assert_close((u * s.unsqueeze(-2)) @ v.transpose(-2, -1), a, rtol=1e-10, atol=1e-12)
    u, s, v = t64(a, False).svd(some=False)
    assert u.shape[-1] == shape[-2] and v.shape[-1] == shape[-1]
    u0, s0, v0 = mt.svd(t64(a, False), compute_uv=False)
    assert not u0.numpy().any() and not v0.numpy().any() and u0.shape[-1] == shape[-2]
    assert_close(s0, np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    q, r = t64(a, False).qr(some=False)
    assert q.shape[-1] == shape[-2]
    assert_close(q @ r, a, rtol=1e-10, atol=1e-12)
    check_grad(lambda x: mt.svd(x)[1], a)


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 2)])
def test_lstsq_matches_numpy(driver, shape):
    a, b = randn(0, shape), randn(1, shape[:-1] + (2,))
    r = L.lstsq(t64(a, False), t64(b, False), driver=driver)
    if len(shape) == 2:
        x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
        assert_close(r.solution, x, rtol=1e-9, atol=1e-10)
        assert r.residuals.shape == ((0,) if driver is None or shape[0] <= shape[1] else (2,))
        if r.residuals.numel():
            assert_close(r.residuals, res, rtol=1e-9)
        assert r.rank.shape == ((0,) if driver == "gels" else ()) and (driver == "gels" or r.rank.item() == rank)
        assert r.singular_values.shape == ((min(shape),) if driver in ("gelsd", "gelss") else (0,))
        assert L.lstsq(t64(a, False), t64(b[..., 0], False)).solution.shape == (shape[-1],)  # a vector B
    else:
        assert_close(r.solution, np.linalg.pinv(a) @ b, rtol=1e-9, atol=1e-10)
    check_grad(lambda p, q: L.lstsq(p, q, driver=driver).solution, a, b)
    with pytest.raises(RuntimeError, match="driver"):
        L.lstsq(t64(a, False), t64(b, False), driver="lapack")
