"""Activations: each a Function on the backend's forward/backward pair, and its public function."""
from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor

__all__ = ["relu", "sigmoid", "tanh"]


class Relu(Function):
    @staticmethod
    def forward(ctx: Any, B: Any, x: Any) -> Any:
        y = B.relu(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Any, gy: Any) -> Any:
        y, = ctx.saved_tensors
        return B.relu_backward(gy, y)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx: Any, B: Any, x: Any) -> Any:
        y = B.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Any, gy: Any) -> Any:
        y, = ctx.saved_tensors
        return B.sigmoid_backward(gy, y)


class Tanh(Function):
    @staticmethod
    def forward(ctx: Any, B: Any, x: Any) -> Any:
        y = B.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Any, gy: Any) -> Any:
        y, = ctx.saved_tensors
        return B.tanh_backward(gy, y)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); ``inplace=True`` writes the result into ``input``."""
    if inplace:
        from .inplace import inplace as _inplace
        return _inplace(input, relu)
    return Relu.apply(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return Sigmoid.apply(input)


def tanh(input: Tensor) -> Tensor:
    return Tanh.apply(input)
