"""Max and average pooling on CUDA: the kernels of ``kernels/pooling.cu``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...deterministic import alert_not_deterministic
from ..generic.conv import Pair
from ..generic.pooling import PoolOps, pool_geometry
from . import rawmodule
from .rawmodule import RawKernelOps, longs

Array = Any


class CudaPoolOps(RawKernelOps, PoolOps):
    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Array, Array]:
        if not self._fits("max_pool2d_forward", x):
            return super().max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        xp = self.xp
        x = xp.ascontiguousarray(x)
        n, c, h, w = x.shape
        out_hw = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)["out_hw"]
        y = xp.empty((n, c, *out_hw), dtype=x.dtype)
        indices = xp.empty((n, c, *out_hw), dtype=xp.int64)
        rawmodule.launch("max_pool2d_forward", x.dtype, y.size,
                         (x, y, indices, *longs(n * c, h, w, *out_hw, *kernel_size, *stride, *padding, *dilation)))
        return y, indices

    def max_pool2d_backward(self, gy: Array, indices: Array, x_shape: tuple[int, ...]) -> Array:
        if not (self._fits("max_pool2d_backward", gy) and indices.dtype == self.xp.int64):
            return super().max_pool2d_backward(gy, indices, x_shape)
        alert_not_deterministic("max_pool2d_backward_cuda")  # atomicAdd: overlapping windows collide
        xp = self.xp
        n, c, h, w = x_shape
        gx = xp.zeros((n, c, h, w), dtype=gy.dtype)
        rawmodule.launch("max_pool2d_backward", gy.dtype, gy.size,
                         (xp.ascontiguousarray(gy), xp.ascontiguousarray(indices), gx,
                          *longs(n * c, gy.shape[2] * gy.shape[3], h * w)))
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


def avg_pool_args(x_shape: Sequence[int], out_hw: Sequence[int], kernel_size: Pair, stride: Pair,
                   padding: Pair, count_include_pad: bool, divisor_override: int | None
                   ) -> tuple[np.int64, ...]:
    """The geometry arguments shared by avg_pool2d_forward and avg_pool2d_backward (0: no override)."""
    n, c, h, w = x_shape
    return longs(n * c, h, w, *out_hw, *kernel_size, *stride, *padding, count_include_pad,
                  divisor_override or 0)
