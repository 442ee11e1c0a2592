"""The ``_ex`` forms of ``torch.linalg``: inv_ex, cholesky_ex, solve_ex. Each returns its result with LAPACK's
``info`` (*) int32 (0: success) instead of raising, unless ``check_errors``; the result for a failed matrix is
what the unchecked factorization leaves (inf / NaN for a singular inverse or solve). The info of inv_ex and
solve_ex is getrf's, from an LU factorization of A (a second factorization, next to the inverse's or solve's
own); the results and their gradients are those of inv, cholesky and solve where every matrix succeeds.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import return_types
from ..backends.base import Backend
from ..backends.generic.solve import LinAlgError
from ..tensor import Tensor
from ..amp.autocast_mode import cast_early
from ..amp.policy import Linalg
from .factorization import Cholesky
from .lu_decomposition import LuFactor, lu_solve
from .solve import Inv, _check_shapes, check_matrices, inv, solve

__all__ = ["inv_ex", "cholesky_ex", "solve_ex"]



def _first_failure(info: Tensor) -> tuple[int, int] | None:
    """(flat batch index, info) of the first failed matrix, or None."""
    flat = info.detach().reshape(-1).cpu().numpy()
    bad = np.flatnonzero(flat)
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


def _batch_prefix(info: Tensor, where: int) -> str:
    return f"(Batch element {where}): " if info.ndim else ""


def _getrf_info(A: Tensor) -> Tensor:
    return LuFactor.apply(A.detach())[2]


class InvUnchecked(Inv):
    """``Inv`` without the singularity error: a singular matrix's inf / NaN (its gradient is Inv's)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        y = B.inv_unchecked(a)
        ctx.save_for_backward(y)
        return y


def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """(inverse (*, n, n), info (*) int32): info j > 0 where U[j, j] of A's LU is exactly zero."""
    A, = cast_early(Inv, A)
    check_matrices("inv_ex", A)
    info = _getrf_info(A)
    failure = _first_failure(info)
    if failure is None:
        return return_types.linalg_inv_ex((inv(A), info))
    if check_errors:
        where, j = failure
        raise LinAlgError(f"linalg.inv_ex: {_batch_prefix(info, where)}The diagonal element {j} is zero, the "
                          "inversion could not be completed because the input matrix is singular.")
    return return_types.linalg_inv_ex((InvUnchecked.apply(A), info))


class CholeskyEx(Cholesky):
    """``Cholesky`` with potrf's info as an extra output, no error (the gradient is Cholesky's)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, upper: bool) -> Any:
        L, info = B.cholesky_ex(a)
        ctx.upper = upper
        ctx.save_for_backward(L)
        return (B.moveaxis(L, -1, -2) if upper else L), info


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """(L (*, n, n), info (*) int32): info j > 0 where the leading j x j minor is not positive-definite."""
    A, = cast_early(Linalg, A)
    check_matrices("cholesky_ex", A)
    L, info = CholeskyEx.apply(A, upper)
    failure = _first_failure(info)
    if check_errors and failure is not None:
        where, j = failure
        raise LinAlgError(f"linalg.cholesky_ex: {_batch_prefix(info, where)}The factorization could not be "
                          f"completed because the input is not positive-definite (the leading minor of order {j} "
                          "is not positive-definite).")
    return return_types.linalg_cholesky_ex((L, info))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """(result, info (*) int32) of ``solve`` (its shapes and broadcasting); info from A's LU. Not on the
    CPU autocast float32 list (PyTorch's refuses a 16-bit A there too)."""
    check_matrices("solve_ex", A)
    info = _getrf_info(A)
    failure = _first_failure(info)
    if failure is None:
        return return_types.linalg_solve_ex((solve(A, B, left=left), info))
    if check_errors:
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(info, failure[0])}The solver failed because the "
                          "input matrix is singular.")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector and not left:
        solve(A, B, left=left)  # raises solve's error
    _check_shapes("solve", A, B.unsqueeze(-1) if vector else B, left)
    LU, pivots, _ = LuFactor.apply(A)
    with np.errstate(all="ignore"):  # the singular matrices' inf / NaN, as PyTorch's
        X = lu_solve(LU, pivots, B.unsqueeze(-1) if vector else B, left=left)
    return return_types.linalg_solve_ex((X.squeeze(-1) if vector else X, info))
