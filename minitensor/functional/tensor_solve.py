"""``linalg.tensorsolve`` and ``linalg.tensorinv``: a solve / inverse of a tensor read as a square matrix,
composed of ``linalg.solve`` / ``linalg.inv`` and reshapes (so their gradients are those ops')."""
from __future__ import annotations

import math
from typing import Sequence

from ..tensor import Tensor
from .shape import movedim
from .solve import inv, solve

__all__: list[str] = []  # linalg names only: minitensor/linalg.py exports them


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[int] | None = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B: A of shape B.shape + X.shape, read as a (prod B.shape)-square matrix.
    ``dims``: dims of A moved to the end first (they become X's)."""
    if dims is not None:
        dims = list(dims)
        A = movedim(A, dims, list(range(A.dim() - len(dims), A.dim())))
    result_shape = tuple(A.shape[B.dim():])
    n, m = math.prod(result_shape), math.prod(B.shape)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {m}")
    return solve(A.reshape(n, n), B.reshape(-1)).reshape(result_shape)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A read as a matrix of rows A.shape[:ind] and columns A.shape[ind:]; shape
    A.shape[ind:] + A.shape[:ind], so that tensordot(tensorinv(A), A, ind) is the identity."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    n, m = math.prod(cols), math.prod(rows)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {n} != {m}")
    return inv(A.reshape(n, n)).reshape(cols + rows)
