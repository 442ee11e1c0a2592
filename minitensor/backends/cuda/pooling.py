"""Max and average pooling on CUDA: the kernels of ``kernels/pooling.cu``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...deterministic import alert_not_deterministic
from ..generic.conv import Pair
from ..generic.pooling import PoolOps, offset_dtype, pool_geometry
from . import rawmodule
from .rawmodule import RawKernelOps, longs

Array = Any


class CudaPoolOps(RawKernelOps, PoolOps):
    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Array, Array]:
        """The kernel writes uint8 offsets: windows over 256 cells take the generic code (int32 offsets)."""
        if not (self._fits("max_pool2d_forward", x) and _byte_offsets(kernel_size)):
            return super().max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        xp = self.xp
        x = xp.ascontiguousarray(x)
        n, c, h, w = x.shape
        out_hw = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)["out_hw"]
        y = xp.empty((n, c, *out_hw), dtype=x.dtype)
        offsets = xp.empty((n, c, *out_hw), dtype=xp.uint8)
        rawmodule.launch("max_pool2d_forward", x.dtype, y.size,
                         (x, y, offsets, *longs(n * c, h, w, *out_hw, *kernel_size, *stride, *padding, *dilation)))
        return y, offsets

    def max_pool2d_backward(self, gy: Array, offsets: Array, x_shape: tuple[int, ...], kernel_size: Pair,
                            stride: Pair, padding: Pair, dilation: Pair) -> Array:
        if not (self._fits("max_pool2d_backward", gy) and offsets.dtype == self.xp.uint8):
            return super().max_pool2d_backward(gy, offsets, x_shape, kernel_size, stride, padding, dilation)
        alert_not_deterministic("max_pool2d_backward_cuda")  # atomicAdd: overlapping windows collide
        xp = self.xp
        n, c, h, w = x_shape
        gx = xp.zeros((n, c, h, w), dtype=gy.dtype)
        rawmodule.launch("max_pool2d_backward", gy.dtype, gy.size,
                         (xp.ascontiguousarray(gy), xp.ascontiguousarray(offsets), gx,
                          *longs(n * c, h, w, *gy.shape[2:], kernel_size[1], *stride, *padding, *dilation)))
        return gx

    def avg_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, ceil_mode: bool,
                   count_include_pad: bool, divisor_override: int | None) -> Array:
        if not self._fits("avg_pool2d_forward", x):
            return super().avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                      divisor_override)
        xp = self.xp
        n, c = x.shape[:2]
        out_hw = pool_geometry(x.shape, kernel_size, stride, padding, (1, 1), ceil_mode)["out_hw"]
        y = xp.empty((n, c, *out_hw), dtype=x.dtype)
        rawmodule.launch("avg_pool2d_forward", x.dtype, y.size,
                         (xp.ascontiguousarray(x), y, *avg_pool_args(x.shape, out_hw, kernel_size, stride, padding,
                                                                      count_include_pad, divisor_override)))
        return y

    def avg_pool2d_backward(self, gy: Array, x_shape: tuple[int, ...], kernel_size: Pair,
                            stride: Pair, padding: Pair, ceil_mode: bool,
                            count_include_pad: bool, divisor_override: int | None) -> Array:
        if not self._fits("avg_pool2d_backward", gy):
            return super().avg_pool2d_backward(gy, x_shape, kernel_size, stride, padding, ceil_mode,
                                               count_include_pad, divisor_override)
        xp = self.xp
        gx = xp.empty(tuple(x_shape), dtype=gy.dtype)
        rawmodule.launch("avg_pool2d_backward", gy.dtype, gx.size,
                         (xp.ascontiguousarray(gy), gx, *avg_pool_args(x_shape, gy.shape[2:], kernel_size, stride,
                                                                        padding, count_include_pad, divisor_override)))
        return gx


def _byte_offsets(kernel_size: Pair) -> bool:
    """Whether a window's offsets fit the kernels' uint8 (``offset_dtype``'s choice up to 256 cells)."""
    return offset_dtype(kernel_size[0] * kernel_size[1]) == np.uint8


def avg_pool_args(x_shape: Sequence[int], out_hw: Sequence[int], kernel_size: Pair, stride: Pair,
                   padding: Pair, count_include_pad: bool, divisor_override: int | None
                   ) -> tuple[np.int64, ...]:
    """The geometry arguments shared by avg_pool2d_forward and avg_pool2d_backward (0: no override)."""
    n, c, h, w = x_shape
    return longs(n * c, h, w, *out_hw, *kernel_size, *stride, *padding, count_include_pad,
                  divisor_override or 0)
