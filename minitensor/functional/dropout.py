"""Dropout: zero each element with probability p while training, scaling the rest by 1 / (1 - p)."""
from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor
from ..backends.base import Backend

__all__ = ["dropout"]


class Dropout(Function):
    """y = x * mask / (1 - p); the boolean mask (from the device's generator) is saved for backward."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, p: float) -> Any:
        y, mask = B.dropout(x, p)
        ctx.save_for_backward(mask)
        ctx.p = p
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        mask, = ctx.saved_tensors
        return B.dropout_backward(gy, mask, ctx.p)


def _dropout(input: Tensor, p: float) -> Tensor:
    return Dropout.apply(input, p=p)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """While ``training``, each element is zeroed with probability ``p`` and the others are scaled by
    1 / (1 - p), so the expectation is unchanged; otherwise (or with p = 0) ``input`` itself comes back.
    ``manual_seed`` makes the mask reproducible."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if not input.is_floating_point():
        raise TypeError(f"dropout: input must be a floating point tensor, got {input.dtype}")
    if inplace:
        from .inplace import inplace as _inplace
        return _inplace(input, _dropout, float(p))
    return _dropout(input, float(p))
