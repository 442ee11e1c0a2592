"""Randomised low-rank factorizations, PyTorch's algorithm (``torch._lowrank``, Halko, Martinsson and Tropp
2009): ``svd_lowrank`` and ``pca_lowrank`` of a matrix or a batch, from a few products with the matrix and QR
factorizations of (m, q) blocks. The draws come from ``randn`` (``manual_seed`` reproduces them)."""
from __future__ import annotations

from .. import dtypes as _dt
from ..creation import randn
from ..tensor import Tensor
from .factorization import qr, svd

__all__ = ["pca_lowrank", "svd_lowrank"]


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """Q (..., m, q) with orthonormal columns whose span approximates the range of A - M: a Gaussian sketch
    A R, then ``niter`` subspace iterations, each followed by a QR for stability."""
    dtype = A.dtype if A.is_floating_point() else _dt.float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def times(X: Tensor, adjoint: bool = False) -> Tensor:
        left, shift = (A.mH, None if M is None else M.mH) if adjoint else (A, M)
        out = left @ X
        return out if shift is None else out - shift @ X
    Q = qr(times(R)).Q
    for _ in range(niter):
        Q = qr(times(Q, adjoint=True)).Q
        Q = qr(times(Q)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int | None, niter: int | None, M: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # work on the tall side: the basis is then of the smaller dimension
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) with A - M ~ U diag(S) V^T: U (..., m, q), S (..., q), V (..., n, q) (a rank-q approximation;
    exact when rank(A - M) <= q). ``niter`` subspace iterations sharpen it; M defaults to zero."""
    if not isinstance(A, Tensor):
        raise TypeError(f"svd_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """PCA of the rows of A (..., m, n): ``svd_lowrank`` of A with its column means subtracted (``center``);
    V's columns are the principal directions, S ** 2 / (m - 1) the variances. q defaults to min(6, m, n)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank(): argument 'A' must be Tensor, not {type(A).__name__}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(-2, keepdim=True), q, niter, None)
