"""Triangular parts of matrices: ``tril`` and ``triu`` over the last two dims (batched)."""
from __future__ import annotations

from typing import Any, Callable

from ..autograd.function import Function
from ..backends.base import Backend
from ..tensor import Tensor

__all__ = ["tril", "triu"]


class _Triangle(Function):
    """y = x where the element is on the kept side of diagonal ``k``, 0 elsewhere; gy takes the same
    mask, so the backward is the same op on gy."""
    op: Callable[[Backend, Any, int], Any]  # the backend's tril or triu

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, k: int) -> Any:
        ctx.k = k
        return ctx.op(B, x, k)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return ctx.op(B, gy, ctx.k), None


class Tril(_Triangle):
    op = staticmethod(lambda B, x, k: B.tril(x, k))


class Triu(_Triangle):
    op = staticmethod(lambda B, x, k: B.triu(x, k))


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
