"""Triangular parts of matrices: ``tril`` and ``triu`` over the last two dims (batched)."""
from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor

__all__ = ["tril", "triu"]


class _Triangle(Function):
    """y = x where the element is on the kept side of diagonal ``k``, 0 elsewhere; gy takes the same
    mask, so the backward is the same op on gy."""
    op: str

    @staticmethod
    def forward(ctx: Any, B: Any, x: Any, k: int) -> Any:
        ctx.k = k
        return getattr(B.xp, ctx.op)(x, k)

    @staticmethod
    def backward(ctx: Any, B: Any, gy: Any) -> Any:
        return getattr(B.xp, ctx.op)(gy, ctx.k), None


class Tril(_Triangle):
    op = "tril"


class Triu(_Triangle):
    op = "triu"


def _check(name: str, input: Tensor, diagonal: Any) -> int:
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions, got shape "
                           f"{tuple(input.shape)}")
    if isinstance(diagonal, bool) or not isinstance(diagonal, int):
        raise TypeError(f"{name}(): argument 'diagonal' must be int, not {type(diagonal).__name__}")
    return diagonal


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims: y[..., i, j] = x[..., i, j] where j - i <= diagonal,
    else 0 (diagonal > 0 keeps that many diagonals above the main one, < 0 drops some below)."""
    return Tril.apply(input, _check("tril", input, diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims: y[..., i, j] = x[..., i, j] where j - i >= diagonal,
    else 0."""
    return Triu.apply(input, _check("triu", input, diagonal))
