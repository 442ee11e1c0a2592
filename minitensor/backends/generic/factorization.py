"""Matrix factorizations over batch dims: Cholesky, symmetric eigendecomposition, SVD, QR."""
from __future__ import annotations

from typing import Any

import numpy as np

from .solve import LinAlgError, lapack

Array = Any


class FactorizationOps:
    xp: Any

    def cholesky(self, a: Array) -> Array:
        """L lower-triangular with a = L L^T, for a (..., n, n) symmetric positive-definite. NumPy's LAPACK
        lets a NaN through as a NaN factor where PyTorch's reports the input not positive-definite."""
        problem = "the factorization could not be completed because the input is not positive-definite"
        L = lapack(self.xp, "cholesky", problem, self.xp.linalg.cholesky, a)
        if self.xp is np and np.isnan(L).any():
            raise LinAlgError(f"linalg.cholesky: {problem}")
        return L

    def cholesky_ex(self, a: Array) -> tuple[Array, Array]:
        """(L, info (...) int32): potrf's info, 0 or the order j of the first leading minor that is not
        positive-definite, where L is left as unblocked potf2 leaves it: the columns before j factored, the
        failed pivot a_jj - sum_k L_jk^2 at (j, j), a's lower triangle after it. Past the one-call
        factorization (a batch with a failure only): potf2's left-looking steps, one column per step over
        the batch, each matrix frozen at its failure."""
        xp = self.xp
        try:
            L = self.cholesky(a)
            if bool(xp.isfinite(L).all()) or not bool(xp.isfinite(a).all()):  # CuPy: NaN, not an error
                return L, xp.zeros(a.shape[:-2], dtype=np.int32)
        except LinAlgError:
            pass
        L = xp.tril(a)
        info = xp.zeros(a.shape[:-2], dtype=np.int32)
        for j in range(a.shape[-1]):
            go = info == 0
            d = L[..., j, j] - (L[..., j, :j] ** 2).sum(-1)
            failed = go & ~(d > 0)  # a NaN pivot fails too
            info = xp.where(failed, j + 1, info).astype(np.int32)
            L[..., j, j] = xp.where(go, xp.where(failed, d, xp.sqrt(xp.where(d > 0, d, 1))), L[..., j, j])
            go = (info == 0)[..., None]
            col = (L[..., j + 1:, j] - xp.einsum("...ik,...k->...i", L[..., j + 1:, :j], L[..., j, :j])) \
                / xp.where(go, L[..., j, j, None], 1)
            L[..., j + 1:, j] = xp.where(go, col, L[..., j + 1:, j])
        return L, info

    def eigh(self, a: Array, lower: bool) -> tuple[Array, Array]:
        """(w ascending (..., n), V (..., n, n)) with a = V diag(w) V^T, reading one triangle of a."""
        w, v = lapack(self.xp, "eigh", "the algorithm failed to converge", self.xp.linalg.eigh, a,
                      "L" if lower else "U")
        return w, v

    def svd(self, a: Array, full_matrices: bool) -> tuple[Array, Array, Array]:
        """(U, S descending, Vh) with a = U diag(S) Vh; a (..., m, n), k = min(m, n) singular values."""
        bad = self._nonfinite(a)
        u, s, vh = lapack(self.xp, "svd", "the algorithm failed to converge", self.xp.linalg.svd,
                          a if bad is None else self.xp.where(bad[..., None, None], 0, a), full_matrices)
        if bad is not None:
            nan = self.xp.nan
            u, s, vh = (self.xp.where(bad[..., None, None], nan, u), self.xp.where(bad[..., None], nan, s),
                        self.xp.where(bad[..., None, None], nan, vh))
        return u, s, vh

    def svdvals(self, a: Array) -> Array:
        """The singular values alone (..., k), descending (no U, V computed)."""
        bad = self._nonfinite(a)
        s = lapack(self.xp, "svd", "the algorithm failed to converge", self.xp.linalg.svd,
                   a if bad is None else self.xp.where(bad[..., None, None], 0, a), False, False)
        return s if bad is None else self.xp.where(bad[..., None], self.xp.nan, s)

    def _nonfinite(self, a: Array) -> Array | None:
        """Which matrices of a hold an inf (None when all are finite), checked before LAPACK sees them: gesdd
        can loop for ever on an inf. PyTorch's results for those: NaN singular values (so matrix_rank 0, the
        2-norm, cond and, from 3x3 on, pinv NaN; its U and Vh are LAPACK's leftovers, NaN here throughout); a
        NaN raises, as there."""
        xp = self.xp
        if a.size == 0 or bool(xp.isfinite(a).all()):
            return None
        if bool(xp.isnan(a).any()):
            raise LinAlgError("linalg.svd: The algorithm failed to converge because the input matrix contained "
                              "non-finite values.")
        return ~xp.isfinite(a).all(axis=(-2, -1))

    def geqrf(self, a: Array) -> tuple[Array, Array]:
        """LAPACK's geqrf (a QR in Householder form) of a (..., m, n): (R on and above the diagonal, the
        reflectors' vectors v_i below it (v_i's leading 1 implicit), tau (..., min(m, n)))."""
        h, tau = self.xp.linalg.qr(a, mode="raw")  # h is the transpose (LAPACK's column-major array)
        return self.xp.ascontiguousarray(self.xp.moveaxis(h, -1, -2)), tau

    def qr(self, a: Array, mode: str) -> tuple[Array, Array]:
        """(Q, R) with a = Q R; ``mode`` "reduced" (Q (..., m, k)), "complete" (Q (..., m, m)) or "r"
        (Q empty)."""
        if mode == "r":
            r = self.xp.linalg.qr(a, mode="r")
            return self.xp.empty((0,), dtype=a.dtype), r
        q, r = self.xp.linalg.qr(a, mode=mode)
        return q, r
