"""LU factorization with partial pivoting, as ``torch.linalg``: lu_factor / lu_factor_ex (A = P L U packed in
one LU (*, m, n) with getrf's 1-based int32 pivots), lu (P, L, U), lu_unpack, lu_solve.

The gradient of the factorization is PyTorch's ``linalg_lu_backward`` (real inputs), with gL = tril(gLU, -1),
gU = triu(gLU), k = min(m, n):
square: gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T;
wide (m < n, U = [U1 U2]): gA = P L^-T [(tril(L^T gL - gU U^T, -1) U1^-T + triu(gU1)), gU2];
tall (m > n, L = [L1; L2]): gA = P [L1^-T triu(gU U^T - L^T gL) + tril(gL1, -1); gL2] U^-T.
lu_solve is two triangular solves of LU's triangles and a row gather, so its gradient (to LU and B) is theirs.
"""
from __future__ import annotations

from typing import Any

from .. import return_types
from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import arange, eye
from ..tensor import Tensor
from ._util import torch_dtype_name
from .scatter import take_along_dim
from .solve import _broadcast_batch, _check_shapes, check_matrices, mT, solve_triangular
from .triangular import tril, triu

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_unpack", "lu_solve", "torch_lu", "torch_lu_solve"]


def _right_solve(B: Backend, x: Any, r: Any, upper: bool) -> Any:
    """x r^-T for a triangular r (its other triangle zero)."""
    return mT(B, B.solve_triangular(r, mT(B, x), upper))


def _lu_backward(B: Backend, lu: Any, perm: Any, g: Any) -> Any:
    """gA from gLU (the three cases of the module docstring)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    eye_k = B.eye(k, k, lu.dtype)
    low = B.tril(lu[..., :, :k], -1) + B.eye(m, k, lu.dtype)  # L (*, m, k), unit diagonal
    up = B.triu(lu[..., :k, :], 0)  # U (*, k, n)
    gl, gu = B.tril(g[..., :, :k], -1), B.triu(g[..., :k, :], 0)
    l1, u1 = low[..., :k, :], up[..., :, :k]
    unit_up = B.triu(mT(B, l1), 1) + eye_k  # L1^T, exactly unit upper-triangular
    ltgl, gumt = B.matmul(mT(B, low), gl), B.matmul(gu, mT(B, up))
    if m == n:
        ga = _right_solve(B, B.tril(ltgl, -1) + B.triu(gumt, 0), u1, True)
        ga = B.solve_triangular(unit_up, ga, True)
    elif m < n:
        ga = _right_solve(B, B.tril(ltgl - gumt, -1), u1, True) + B.triu(gu[..., :, :k], 0)
        ga = B.solve_triangular(unit_up, B.concatenate([ga, gu[..., :, k:]], -1), True)
    else:
        ga = B.solve_triangular(unit_up, B.triu(gumt - ltgl, 0), True) + B.tril(gl[..., :k, :], -1)
        ga = _right_solve(B, B.concatenate([ga, gl[..., k:, :]], -2), u1, True)
    # A = P (L U): row i of L U is row perm[i] of A
    onehot = B.astype(B.expand_dims(perm, (-2,)) == B.expand_dims(B.arange(0, m, 1, perm.dtype), (-1,)), lu.dtype)
    return B.matmul(onehot, ga)


class LuFactor(ArrayFunction):
    """(LU, pivots, info); pivots and info are integer extras without gradient."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        lu, pivots, info = B.lu_factor(a)
        ctx.save_for_backward(lu, pivots)
        return lu, pivots, info

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        lu, pivots = ctx.saved_arrays
        return _lu_backward(B, lu, B.lu_permutation(pivots, lu.shape[-2]), g)


class LuPermutation(ArrayFunction):
    """The row order (*, m) int64 of pivots (*, k): row i of L U is row perm[i] of A."""
    differentiable = False

    @staticmethod
    def forward(ctx: Any, B: Backend, pivots: Any, m: int) -> Any:
        return B.lu_permutation(pivots, m)


def _check_lu_input(name: str, A: Any) -> None:
    """PyTorch's checks of getrf's input (its words: lu_factor's dims error, then "lu_cpu" for the dtypes)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"torch.{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} "
                           "instead")
    if not A.dtype.is_floating_point or A.dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{torch_dtype_name(A.dtype)}\'')


def _check_pivot(pivot: bool) -> None:
    if not pivot:  # PyTorch has no unpivoted LU on the CPU; minitensor none anywhere (docs/differences.md)
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _raise_singular(name: str, info: Tensor) -> None:
    """PyTorch's error of lu_factor for a zero on U's diagonal, naming the first such matrix (flat index)."""
    bad = (info.reshape(-1) > 0).nonzero()
    if bad.shape[0]:
        where = int(bad[0, 0].item())
        at = int(info.reshape(-1)[where].item())
        prefix = f"(Batch element {where}): " if info.ndim else ""
        raise RuntimeError(f"torch.linalg.{name}: {prefix}U[{at},{at}] is zero and using it on lu_solve would "
                           "result in a division by zero. If you still want to perform the factorization, consider "
                           "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """(LU (*, m, n), pivots (*, k) int32, info (*) int32) with A = P L U: L (unit diagonal, not stored) below
    LU's diagonal, U on and above it; info > 0 marks an exactly singular U (an error if ``check_errors``)."""
    _check_lu_input("lu_factor_ex", A)
    _check_pivot(pivot)
    LU, pivots, info = LuFactor.apply(A)
    if check_errors:
        _raise_singular("lu_factor_ex", info)
    return return_types.linalg_lu_factor_ex((LU, pivots, info))


def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """(LU, pivots) of ``lu_factor_ex``, raising (as PyTorch) where U is exactly singular."""
    _check_lu_input("lu_factor", A)
    _check_pivot(pivot)
    LU, pivots, info = LuFactor.apply(A)
    _raise_singular("lu_factor", info)
    return return_types.linalg_lu_factor((LU, pivots))


def lu(A: Tensor, *, pivot: bool = True) -> Any:
    """(P (*, m, m), L (*, m, k), U (*, k, n)) with A = P L U; no error for a singular A."""
    _check_lu_input("lu_factor", A)
    _check_pivot(pivot)
    LU, pivots, _ = LuFactor.apply(A)
    return return_types.linalg_lu(lu_unpack(LU, pivots))


def _permutation(pivots: Tensor, m: int) -> Tensor:
    return LuPermutation.apply(pivots, m)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True) -> Any:
    """(P, L, U) from ``lu_factor``'s (LU, pivots): P (*, m, m) in LU's dtype, L (*, m, k) unit lower-
    triangular, U (*, k, n); the parts not asked for come back empty, as PyTorch's."""
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    if unpack_pivots and (not isinstance(LU_pivots, Tensor) or LU_pivots.dtype != _dt.int32):
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = LU_data.new_zeros((0,))
    L = U = P = empty
    if unpack_data:
        L = tril(LU_data[..., :, :k], -1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = triu(LU_data[..., :k, :])
    if unpack_pivots:
        perm = _permutation(LU_pivots, m)
        P = (perm.unsqueeze(-2) == arange(m, device=LU_data.device).unsqueeze(-1)).to(LU_data.dtype)
    return return_types.lu_unpack((P, L, U))


def _check_lu_solve(LU: Any, pivots: Any, B: Any, left: bool) -> None:
    """PyTorch's checks of lu_solve's arguments, in its order and words."""
    check_matrices("lu_solve", LU, square=False)
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {LU.shape[-1]} matrices")
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{torch_dtype_name(LU.dtype)} and B of type {torch_dtype_name(B.dtype)} instead")
    if not isinstance(pivots, Tensor) or pivots.dtype != _dt.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if pivots.ndim < 1 or pivots.shape[-1] != LU.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
                           "matrix")
    _check_shapes("lu_solve", LU, B, left)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with A X = B (A^T X = B if ``adjoint``; X A = B or X A^T = B if not ``left``) for A = P L U given as
    ``lu_factor``'s (LU (*, n, n), pivots (*, n)); B (*, n, k) (or (*, k, n) when not ``left``). The batch
    dims of LU, pivots and B broadcast."""
    _check_lu_solve(LU, pivots, B, left)
    if not left:  # X A = B <=> A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    n = LU.shape[-1]
    batch = _broadcast_batch(_broadcast_batch(B.shape[:-2], LU.shape[:-2]), pivots.shape[:-1])
    LU, B = LU.expand(batch + (n, n)), B.expand(batch + tuple(B.shape[-2:]))
    perm = _permutation(pivots.expand(batch + (n,)), n).unsqueeze(-1)  # row i of L U is row perm[i] of A
    if not adjoint:  # X = U^-1 L^-1 P^T B, (P^T B)_i = B_perm[i]
        y = solve_triangular(LU, take_along_dim(B, perm, -2), upper=False, unitriangular=True)
        return solve_triangular(LU, y, upper=True)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B, (P Z)_perm[i] = Z_i
    y = solve_triangular(LU.mT, B, upper=False)
    z = solve_triangular(LU.mT, y, upper=True, unitriangular=True)
    return take_along_dim(z, perm.argsort(-2), -2)


def torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    """``torch.lu``, the older form: (LU, pivots) or, with ``get_infos``, (LU, pivots, infos); no error for
    a singular A."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def torch_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve``, the older form (the right side first): ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return lu_solve(LU_data, LU_pivots, b)
