"""``linalg.matrix_exp`` (``torch.matrix_exp``, ``Tensor.matrix_exp``): exp(A) = sum_k A^k / k! for A (*, n, n).

The gradient is the Frechet derivative of exp at A^T applied to g, which is the upper-right block of the
exponential of a block matrix (as PyTorch's): exp([[A^T, g], [0, A^T]]) = [[e^{A^T}, L(A^T, g)], [0, e^{A^T}]].
"""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from .solve import check_matrices, mT

__all__ = ["matrix_exp"]


class MatrixExp(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        ctx.save_for_backward(a)
        return B.matrix_exp(a)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        a, = ctx.saved_arrays
        n = a.shape[-1]
        at = mT(B, B.broadcast_to(a, g.shape))
        block = B.concatenate([B.concatenate([at, g], -1),
                               B.concatenate([B.zeros(g.shape, g.dtype), at], -1)], -2)  # (*, 2n, 2n)
        return B.matrix_exp(block)[..., :n, n:]


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) for A (*, n, n) float; a 16-bit A runs in float32 (its result rounded back)."""
    check_matrices("matrix_exp", A, low_precision=True)
    if A.dtype in (_dt.float16, _dt.bfloat16):
        return MatrixExp.apply(A.float()).to(A.dtype)
    return MatrixExp.apply(A)
