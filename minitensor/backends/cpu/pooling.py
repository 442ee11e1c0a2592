"""The CPU's max pooling: on a channels-last input (a convolution's output here), one pass of the Numba
kernel (``numba_kernels/pooling.py``), which keeps y and the indices channels-last too."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel
from ..generic.conv import Pair
from ..generic.pooling import PoolOps, pool_geometry
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .conv import is_channels_last

Array = Any


class CpuPoolOps(PoolOps):
    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Array, Array]:
        """As ``PoolOps.max_pool2d``; a channels-last x takes the Numba kernel (one pass, y and indices
        channels-last too)."""
        kernels = numba_kernels.load("pooling") if x.dtype in KERNEL_DTYPES and is_channels_last(x) else None
        if kernels is None:
            return super().max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        n, c = x.shape[:2]
        out_h, out_w = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)["out_hw"]
        y = np.empty((n, out_h, out_w, c), dtype=x.dtype)
        indices = np.empty((n, out_h, out_w, c), dtype=np.int64)
        run_kernel("max_pool2d", False, kernels.max_pool2d, x.transpose(0, 2, 3, 1), y, indices, *kernel_size,
                   *stride, *padding, *dilation)
        return y.transpose(0, 3, 1, 2), indices.transpose(0, 3, 1, 2)

    def max_pool2d_backward(self, gy: Array, indices: Array, x_shape: tuple[int, ...]) -> Array:
        """As ``PoolOps.max_pool2d_backward``; channels-last indices (from the kernel above) take the Numba
        scatter, and gx is channels-last too."""
        kernels = (numba_kernels.load("pooling") if gy.dtype in KERNEL_DTYPES and indices.dtype == np.int64
                   and is_channels_last(indices) else None)
        if kernels is None:
            return super().max_pool2d_backward(gy, indices, x_shape)
        n, c, h, w = x_shape
        gx = np.empty((n, h * w, c), dtype=gy.dtype)
        run_kernel("max_pool2d_backward", False, kernels.max_pool2d_backward, gy.transpose(0, 2, 3, 1),
                   indices.transpose(0, 2, 3, 1), gx)
        return gx.reshape(n, h, w, c).transpose(0, 3, 1, 2)
