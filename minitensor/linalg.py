"""``torch.linalg``: norms, inverses and solves, determinants, factorizations. The op families live in
``functional/`` (solve, factorization, norms, linalg); this module is the public namespace."""
from __future__ import annotations

from .backends.generic.solve import LinAlgError
from .functional.factorization import cholesky, eigh, eigvalsh, lstsq, matrix_rank, pinv, qr, svd, svdvals
from .functional.linalg import cross, matmul, multi_dot, vecdot
from .functional.norms import cond, matrix_norm, norm, vector_norm
from .functional.solve import det, inv, matrix_power, slogdet, solve, solve_triangular
from .functional.triangular import diagonal as _diagonal
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
           "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm"]
__all__ += ["cross", "diagonal", "matrix_rank", "multi_dot", "vecdot"]
__all__ += ["cond", "lstsq", "solve_triangular"]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.diagonal`` with the last two dims as the default planes."""
    return _diagonal(A, offset, dim1, dim2)
