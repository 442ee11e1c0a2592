"""PyTorch's removed linear-algebra functions that 2.13 still names: ``solve``, ``lstsq``, ``eig``, ``symeig``,
``matrix_rank`` raise its RuntimeError (verbatim: it names their ``torch.linalg`` replacements, which
``minitensor.linalg`` has); ``triangular_solve`` still works, deprecated, as PyTorch's."""
from __future__ import annotations

import warnings
from typing import Any, NoReturn

from . import return_types as rt
from .functional.solve import solve_triangular
from .tensor import Tensor

__all__ = ["eig", "lstsq", "matrix_rank", "solve", "symeig", "triangular_solve"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed."
MESSAGES = {
    "solve": _REMOVED + (" `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has "
              "its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
              "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
              "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
              "torch.linalg.solve(A, B)"),
    "lstsq": _REMOVED + (" `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
              "reversed arguments and does not return the QR decomposition in the returned tuple "
              "(although it returns other information about the problem).\n\nTo get the QR decomposition "
              "consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the "
              "residuals of the solution in the last m - n columns of the returned value whenever m > n. "
              "In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
              "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]"
              "\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution"),
    "eig": _REMOVED + (" `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than "
              "real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
              "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be"
              " replaced with:\nL_complex, V_complex = torch.linalg.eig(A)"),
    "symeig": _REMOVED + (" The default behavior has changed from using the upper triangular portion of the matrix by"
              " default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) "
              "should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL,"
              " V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
              "torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "matrix_rank": _REMOVED + ("\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
              "'symmetric' was"
              " renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
}


def _removed(name: str) -> NoReturn:
    raise RuntimeError(MESSAGES[name])


def solve(input: Tensor, A: Tensor, *, out: Any = None) -> NoReturn:
    _removed("solve")


def lstsq(input: Tensor, A: Tensor, *, out: Any = None) -> NoReturn:
    _removed("lstsq")


def eig(self: Tensor, eigenvectors: bool = False, *, e: Any = None, v: Any = None) -> NoReturn:
    _removed("eig")


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out: Any = None) -> NoReturn:
    _removed("symeig")


def matrix_rank(input: Tensor, tol: Any = None, symmetric: bool = False, *, out: Any = None) -> NoReturn:
    _removed("matrix_rank")


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> rt.triangular_solve:
    """(X, A.clone()) with op(A) X = b, A triangular (``upper``), op(A) = A^T with ``transpose``;
    ``unitriangular``: A's diagonal taken as ones. Batches broadcast. Deprecated in PyTorch for
    ``linalg.solve_triangular(A, b)``."""
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
                  "and will be removed in a future PyTorch release.\n"
                  "torch.linalg.solve_triangular has its arguments reversed and does not return a copy of one of "
                  "the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
                  "X = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    left = A.mT if transpose else A
    X = solve_triangular(left, b, upper=bool(upper) != bool(transpose), unitriangular=unitriangular)
    return rt.triangular_solve((X, A.clone()))
