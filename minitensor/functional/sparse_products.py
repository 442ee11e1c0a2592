"""Products with sparse COO matrices (``torch.sparse.mm``, ``spmm``, ``mm`` / ``@``): sparse @ dense and
dense @ sparse give a dense matrix, sparse @ sparse a coalesced sparse one. Both operands get gradients; a
sparse operand's is sparse, on its own cells (docs/sparse.md)."""
from __future__ import annotations

from typing import Any

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO
from ..tensor import Tensor
from ._util import torch_dtype_name
from .sparse import is_sparse

__all__ = ["sparse_mm", "spmm", "sparse_matmul"]


class SparseMM(ArrayFunction):
    """y = s @ d: dy/dd = s.T @ gy; for s's values, gy[i] . d[j] at each entry (i, j)."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, s: SparseCOO, d: Any) -> Any:
        ctx.save_for_backward(s, d)
        return B.sparse_mm(s, d)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        s, d = ctx.saved_arrays
        gs = None
        if ctx.needs_input_grad[0]:  # on s's cells: a repeated entry listed twice would count twice
            s = B.sparse_coalesce(s)
            gs = s.with_values(B.sparse_mm_values_grad(s.indices, gy, d))
        return gs, (B.sparse_mm(s, gy, transpose=True) if ctx.needs_input_grad[1] else None)


class SparseSparseMM(ArrayFunction):
    """y = a @ b, both sparse (n, k) @ (k, m): coalesced sparse (n, m). For the values, each term
    a[i, k] b[k, j] of the product gets g[i, j] times the other factor (``B.sparse_spgemm_grads``)."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, a: SparseCOO, b: SparseCOO) -> Any:
        a, b = B.sparse_coalesce(a), B.sparse_coalesce(b)
        ctx.save_for_backward(a, b)
        return B.sparse_spgemm(a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        a, b = ctx.saved_arrays
        ga, gb = B.sparse_spgemm_grads(a, b, g)
        return a.with_values(ga), b.with_values(gb)


def _check_operand(t: Tensor, name: str) -> None:
    if t.ndim != 2 or (is_sparse(t) and t.array.sparse_dim != 2):
        sparse = f" ({t.array.sparse_dim} sparse dims)" if is_sparse(t) else ""
        raise RuntimeError(f"sparse.mm: expected 2-D {name} (2 sparse dims when sparse), got {t.ndim}-D{sparse}")


def sparse_mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1 @ mat2`` for 2-D matrices, one or both sparse COO (2 sparse dims, scalar values): dense when one
    is dense, coalesced sparse when both are sparse; differentiable for both."""
    s1, s2 = is_sparse(mat1), is_sparse(mat2)
    if not s1 and not s2:
        raise NotImplementedError("sparse.mm: mat1 must be a sparse COO tensor (layout=minitensor.sparse_coo), or "
                                  "mat2; use minitensor.mm for two dense tensors")
    _check_operand(mat1, "mat1")
    _check_operand(mat2, "mat2")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {torch_dtype_name(mat1.dtype)} but found "
                           f"{torch_dtype_name(mat2.dtype)}")
    if s1 and s2:
        return SparseSparseMM.apply(mat1, mat2)
    if s1:
        return SparseMM.apply(mat1, mat2)
    return SparseMM.apply(mat2.t(), mat1.t()).t()  # d @ s = (s.T @ d.T).T: the transposes are views


spmm = sparse_mm


def sparse_matmul(input: Tensor, other: Tensor) -> Tensor:
    """``matmul`` / ``@`` with a sparse operand: a matrix product, or a matrix and a vector (as PyTorch)."""
    if not is_sparse(input) and isinstance(input, Tensor) and input.ndim == 1:
        return sparse_mm(input.unsqueeze(0), other).squeeze(0)
    if not is_sparse(other) and isinstance(other, Tensor) and other.ndim == 1:
        return sparse_mm(input, other.unsqueeze(1)).squeeze(1)
    return sparse_mm(input, other)
