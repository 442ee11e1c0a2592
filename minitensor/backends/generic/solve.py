"""Inverses and determinants of (batches of) square matrices: LAPACK through NumPy, cuSOLVER through CuPy."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

Array = Any


class LinAlgError(RuntimeError):
    """A matrix the factorization cannot handle (singular, not positive-definite): ``torch.linalg.LinAlgError``,
    a RuntimeError as PyTorch's."""


def lapack(xp: Any, name: str, problem: str, f: Callable[..., Any], *args: Any) -> Any:
    """``f(*args)`` with the array library's LinAlgError as ours, named as PyTorch names it. (CuPy does not
    check by default: a singular input gives inf/nan there, docs/differences.md.)"""
    try:
        return f(*args)
    except xp.linalg.LinAlgError:
        raise LinAlgError(f"linalg.{name}: {problem}") from None


class SolveOps:
    xp: Any

    def inv(self, a: Array) -> Array:
        """a^-1 over the batch dims of a (..., n, n)."""
        return lapack(self.xp, "inv", "the input matrix is singular, the inversion could not be completed",
                            self.xp.linalg.inv, a)

    def solve(self, a: Array, b: Array) -> Array:
        """x with a @ x = b; a (..., n, n), b (..., n, k) with the same batch dims."""
        return lapack(self.xp, "solve", "the solver failed because the input matrix is singular",
                      self.xp.linalg.solve, a, b)

    def solve_triangular(self, a: Array, b: Array, upper: bool) -> Array:
        """x with a @ x = b for a triangular a (..., n, n) (its other triangle zero), b (..., n, k), as BLAS's
        trsm: no singularity check, so a zero on the diagonal gives the infinities and NaNs of substitution,
        as PyTorch. A non-singular a goes through LAPACK's solve (one call for the batch)."""
        xp = self.xp
        try:
            return xp.linalg.solve(a, b)
        except xp.linalg.LinAlgError:
            pass
        # substitution, row by row (n steps, each over the batch and the columns): x_i = (b_i - sum_j a_ij x_j)
        # / a_ii over the rows j already solved, whose order decides where 0 * inf makes a NaN, as trsm's
        x = xp.zeros(b.shape, dtype=xp.result_type(a, b))
        n = a.shape[-1]
        order = range(n - 1, -1, -1) if upper else range(n)
        with np.errstate(all="ignore"):
            for i in order:
                done = slice(i + 1, n) if upper else slice(0, i)
                acc = b[..., i, :] - xp.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :]) \
                    if i != order[0] else b[..., i, :]
                x[..., i, :] = acc / a[..., i, i, None]
        return x

    def inv_unchecked(self, a: Array) -> Array:
        """a^-1 as PyTorch's backward formulas get it, from an LU factorization without a singularity check:
        a singular a gives the infinities and NaNs of its zero pivot, not an error (CuPy never checks)."""
        xp = self.xp
        try:
            return xp.linalg.inv(a)
        except xp.linalg.LinAlgError:
            pass
        # getrf without its check, then L^-1 and U^-1 applied to P^T I over the whole batch: the zero pivot's
        # inf / NaN come from the substitution, as getri's
        lu, pivots, _ = self.lu_factor(a)  # type: ignore[attr-defined]  # LuOps, a sibling mixin of Backend
        n = a.shape[-1]
        eye = xp.eye(n, dtype=a.dtype)
        rhs = eye[self.lu_permutation(pivots, n)]  # type: ignore[attr-defined]  # (P^T I)_i = I_perm[i]
        with np.errstate(all="ignore"):
            return self.solve_triangular(xp.triu(lu), self.solve_triangular(xp.tril(lu, -1) + eye, rhs, False), True)

    def _nan_matrices(self, a: Array) -> Array:
        """Where a matrix of the batch holds a NaN, which LAPACK's LU may pivot past (NumPy's det gives 0)."""
        return self.xp.isnan(a).any((-2, -1))

    def slogdet(self, a: Array) -> tuple[Array, Array]:
        """(sign, log|det a|) over the batch dims: no overflow where det itself would; (0, nan) for a matrix
        with a NaN, as PyTorch."""
        xp = self.xp
        with np.errstate(invalid="ignore"):  # a NaN matrix: fixed below
            sign, logabsdet = xp.linalg.slogdet(a)
        bad = self._nan_matrices(a)
        return xp.where(bad, 0, sign).astype(sign.dtype), xp.where(bad, np.nan, logabsdet).astype(logabsdet.dtype)

    def det(self, a: Array) -> Array:
        """det a over the batch dims; NaN for a matrix with a NaN, as PyTorch."""
        with np.errstate(invalid="ignore"):  # a NaN matrix: fixed below
            d = self.xp.linalg.det(a)
        return self.xp.where(self._nan_matrices(a), np.nan, d).astype(d.dtype)
