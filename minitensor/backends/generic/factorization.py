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

    def qr(self, a: Array, mode: str) -> tuple[Array, Array]:
        """(Q, R) with a = Q R; ``mode`` "reduced" (Q (..., m, k)), "complete" (Q (..., m, m)) or "r"
        (Q empty)."""
        if mode == "r":
            r = self.xp.linalg.qr(a, mode="r")
            return self.xp.empty((0,), dtype=a.dtype), r
        q, r = self.xp.linalg.qr(a, mode=mode)
        return q, r
