"""``torch.linalg``: norms, inverses and solves, determinants, factorizations. The op families live in
``functional/`` (solve, factorization, norms, linalg); this module is the public namespace."""
from __future__ import annotations

from typing import Any

from .backends.generic.solve import LinAlgError
from .functional.factorization import cholesky, eigh, eigvalsh, lstsq, matrix_rank, pinv, qr, svd, svdvals
from .functional.linalg import cross, matmul, multi_dot, vecdot
from .functional.householder import householder_product
from .functional.linalg_ex import cholesky_ex, inv_ex, solve_ex
from .functional.lu_decomposition import lu, lu_factor, lu_factor_ex, lu_solve
from .functional.matrix_functions import matrix_exp
from .functional.norms import cond, matrix_norm, norm, vector_norm
from .functional.solve import det, inv, matrix_power, slogdet, solve, solve_triangular
from .functional.triangular import diagonal as _diagonal
from .functional.arrange import linalg_vander as vander
from .functional.tensor_solve import tensorinv, tensorsolve
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
           "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm"]
__all__ += ["cross", "diagonal", "matrix_rank", "multi_dot", "vecdot"]
__all__ += ["cond", "lstsq", "solve_triangular"]
__all__ += ["cholesky_ex", "inv_ex", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "solve_ex"]
__all__ += ["eig", "eigvals", "householder_product"]
__all__ += ["tensorinv", "tensorsolve", "vander"]


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.diagonal`` with the last two dims as the default planes."""
    return _diagonal(A, offset, dim1, dim2)


def _no_complex(name: str) -> NotImplementedError:
    return NotImplementedError(f"linalg.{name}: the eigenvalues of a general real matrix are complex, and minitensor "
                               "has no complex dtypes (docs/differences.md); for a symmetric matrix use "
                               f"linalg.{name}h")


def eig(A: Tensor) -> Any:
    """Not available: its results are complex (see ``_no_complex``)."""
    raise _no_complex("eig")


def eigvals(A: Tensor) -> Any:
    """Not available: its results are complex (see ``_no_complex``)."""
    raise _no_complex("eigvals")
