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
        u, s, vh = lapack(self.xp, "svd", "the algorithm failed to converge", self.xp.linalg.svd, a, full_matrices)
        return u, s, vh

    def svdvals(self, a: Array) -> Array:
        """The singular values alone (..., k), descending (no U, V computed)."""
        return lapack(self.xp, "svd", "the algorithm failed to converge", self.xp.linalg.svd, a, False, False)

    def qr(self, a: Array, mode: str) -> tuple[Array, Array]:
        """(Q, R) with a = Q R; ``mode`` "reduced" (Q (..., m, k)), "complete" (Q (..., m, m)) or "r"
        (Q empty)."""
        if mode == "r":
            r = self.xp.linalg.qr(a, mode="r")
            return self.xp.empty((0,), dtype=a.dtype), r
        q, r = self.xp.linalg.qr(a, mode=mode)
        return q, r
