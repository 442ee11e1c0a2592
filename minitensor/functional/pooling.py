"""Pooling (PyTorch's signatures): ``max_pool2d`` (optionally with indices), ``avg_pool2d`` and
``adaptive_avg_pool2d``, over (N, C, H, W) or unbatched (C, H, W) inputs."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from ..autograd.function import Function
from ..backends.generic.pooling import pool_out_len
from ..tensor import Tensor
from .conv import IntPair, batched, check_input, pair
from ..backends.base import Backend

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


class MaxPool2d(Function):
    """y = the window's max; returns (y, indices) with int64 flat positions in each input plane.
    Backward sends gy to the argmax (overlapping windows add up); only the indices are saved."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                padding: tuple[int, int], dilation: tuple[int, int], ceil_mode: bool) -> Any:
        y, indices = B.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        ctx.x_shape = x.shape
        ctx.save_for_backward(indices)
        return y, indices

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        indices, = ctx.saved_tensors
        return B.max_pool2d_backward(gy, indices, ctx.x_shape)


class AvgPool2d(Function):
    """y = sum of the window / divisor; backward spreads gy / divisor over the window. Saves nothing."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                padding: tuple[int, int], ceil_mode: bool, count_include_pad: bool,
                divisor_override: int | None) -> Any:
        ctx.x_shape = x.shape
        ctx.params = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        return B.avg_pool2d(x, *ctx.params)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.avg_pool2d_backward(gy, ctx.x_shape, *ctx.params)


class AdaptiveAvgPool2d(Function):
    """y = A_h x A_w^T with averaging matrices over PyTorch's adaptive windows; gx = A_h^T gy A_w."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, output_size: tuple[int, int]) -> Any:
        ctx.x_shape = x.shape
        return B.adaptive_avg_pool2d(x, output_size)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.adaptive_avg_pool2d_backward(gy, ctx.x_shape)


def max_pool2d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """y[n, c, oh, ow] = max over (i, j) of x_pad[n, c, oh*s + i*d, ow*s + j*d], padding being -inf;
    (N, C, H, W) -> (N, C, oH, oW), oH = floor_or_ceil((H + 2p - d*(k-1) - 1) / s) + 1.

    ``stride`` defaults to ``kernel_size``; ``return_indices=True`` also returns the int64 argmax as a
    flat position in each input H*W plane (PyTorch's indices, for ``max_unpool2d``; -1 for a dilated
    window wholly in the padding, whose output is -inf). Floating point and integer inputs."""
    name = "max_pool2d"
    kernel, stride, padding = _pool_args(name, input, kernel_size, stride, padding, integers=True)
    dilation = pair(dilation, "dilation", name)
    _check_output_size(input, kernel, stride, padding, dilation, ceil_mode)
    y, indices = batched(input, lambda x: MaxPool2d.apply(
        x, kernel_size=kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=bool(ceil_mode)))
    return (y, indices) if return_indices else y


def avg_pool2d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """y = (sum of the window of the zero-padded input) / divisor; the divisor is ``divisor_override``,
    else the window's size clipped to the padded input (``count_include_pad``) or to the input itself."""
    name = "avg_pool2d"
    kernel, stride, padding = _pool_args(name, input, kernel_size, stride, padding,
                                         integers=isinstance(input, Tensor) and input.dtype.np == np.int64)
    if divisor_override is not None and operator.index(divisor_override) == 0:
        raise RuntimeError(f"{name}: divisor_override must not be zero")
    _check_output_size(input, kernel, stride, padding, (1, 1), ceil_mode)
    return batched(input, lambda x: AvgPool2d.apply(
        x, kernel_size=kernel, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad), divisor_override=divisor_override))


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """(N, C, H, W) -> (N, C, oH, oW); output cell i averages rows [floor(i*H/oH), ceil((i+1)*H/oH)) (and
    likewise columns). ``output_size`` is an int or a pair; a None entry keeps the input's size."""
    name = "adaptive_avg_pool2d"
    check_input(name, input)
    sizes = (output_size,) * 2 if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    if len(sizes) != 2:
        raise RuntimeError(f"{name}: output_size must be an int or a pair, got {output_size!r}")
    out = pair(tuple(input.shape[-2 + a] if s is None else s for a, s in enumerate(sizes)),
               "output_size", name)
    return batched(input, lambda x: AdaptiveAvgPool2d.apply(x, output_size=out))


def _pool_args(name: str, input: Tensor, kernel_size: IntPair, stride: IntPair | None, padding: IntPair,
               integers: bool = False) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(kernel, stride, padding) as pairs; stride defaults to the kernel; padding at most half the kernel."""
    check_input(name, input, integers=integers)
    kernel = pair(kernel_size, "kernel_size", name)
    stride = kernel if stride is None or stride == [] or stride == () else pair(stride, "stride", name)
    padding = pair(padding, "padding", name, minimum=0)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise RuntimeError(f"{name}: padding should be at most half of the kernel size, got padding={padding} "
                           f"and kernel_size={kernel}")
    return kernel, stride, padding


def _check_output_size(input: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[int, int], dilation: tuple[int, int], ceil_mode: bool) -> None:
    """PyTorch's rule: every output dim at least 1 (in ceil mode a window may hang past the input)."""
    out = [pool_out_len(input.shape[-2 + a], kernel[a], stride[a], padding[a], dilation[a], bool(ceil_mode))
           for a in range(2)]
    if min(out) < 1:
        planes, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({planes}x{h}x{w}). Calculated output size: "
                           f"({planes}x{out[0]}x{out[1]}). Output size is too small")
