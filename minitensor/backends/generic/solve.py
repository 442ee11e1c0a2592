"""Inverses and determinants of (batches of) square matrices: LAPACK through NumPy, cuSOLVER through CuPy."""
from __future__ import annotations

from typing import Any, Callable

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

    def slogdet(self, a: Array) -> tuple[Array, Array]:
        """(sign, log|det a|) over the batch dims: no overflow where det itself would."""
        sign, logabsdet = self.xp.linalg.slogdet(a)
        return sign, logabsdet

    def det(self, a: Array) -> Array:
        return self.xp.linalg.det(a)
