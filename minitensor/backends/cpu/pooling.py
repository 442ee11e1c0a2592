"""The CPU's max pooling: on a channels-last input (a convolution's output here), one pass of the Numba
kernel (``numba_kernels/pooling.py``), which keeps y and the argmax offsets channels-last too."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel
from ..generic.conv import Pair
from ..generic.pooling import PoolOps, offset_dtype, pool_geometry
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .conv import is_channels_last
from .linalg import in_float32

Array = Any


class CpuPoolOps(PoolOps):
    @in_float32
    def max_pool2d(self, x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Array, Array]:
        """As ``PoolOps.max_pool2d``; a channels-last x takes the Numba kernel (one pass, y and offsets
        channels-last too). 16-bit x pools in float32 (``in_float32``: a selection, exact)."""
        fits = x.dtype in KERNEL_DTYPES and is_channels_last(x) and kernel_size[0] * kernel_size[1] < 2 ** 31
        kernels = numba_kernels.load("pooling") if fits else None
        if kernels is None:
            return super().max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        n, c = x.shape[:2]
        out_h, out_w = pool_geometry(x.shape, kernel_size, stride, padding, dilation, ceil_mode)["out_hw"]
        y = np.empty((n, out_h, out_w, c), dtype=x.dtype)
        offsets = np.empty((n, out_h, out_w, c), dtype=offset_dtype(kernel_size[0] * kernel_size[1]))
        run_kernel("max_pool2d", False, kernels.max_pool2d, x.transpose(0, 2, 3, 1), y, offsets, *kernel_size,
                   *stride, *padding, *dilation)
        return y.transpose(0, 3, 1, 2), offsets.transpose(0, 3, 1, 2)

    @in_float32
    def max_pool2d_backward(self, gy: Array, offsets: Array, x_shape: tuple[int, ...], kernel_size: Pair,
                            stride: Pair, padding: Pair, dilation: Pair) -> Array:
        """As ``PoolOps.max_pool2d_backward``; channels-last offsets (from the kernel above) take the Numba
        scatter (a select per cell where windows share no cell), and gx is channels-last too. A 16-bit gy
        adds up in float32, rounded once."""
        kernels = (numba_kernels.load("pooling") if gy.dtype in KERNEL_DTYPES and is_channels_last(offsets)
                   else None)
        if kernels is None:
            return super().max_pool2d_backward(gy, offsets, x_shape, kernel_size, stride, padding, dilation)
        n, c, h, w = x_shape
        gy_cl, offsets_cl = gy.transpose(0, 2, 3, 1), offsets.transpose(0, 2, 3, 1)
        spans = [dilation[a] * (kernel_size[a] - 1) + 1 for a in range(2)]
        if stride[0] >= spans[0] and stride[1] >= spans[1]:  # no cell in two windows: one select per cell
            gy_cl = np.ascontiguousarray(gy_cl)  # read once per cell of its window: an NCHW gy (after a
            gx = np.empty((n, h, w, c), dtype=gy.dtype)  # flatten) is copied once, not read with strides
            covered = (not any(padding) and dilation == (1, 1) and stride == tuple(kernel_size)
                       and gy.shape[2] * stride[0] == h and gy.shape[3] * stride[1] == w)
            run_kernel("max_pool2d_backward", False, kernels.max_pool2d_backward_disjoint, gy_cl, offsets_cl, gx,
                       *kernel_size, *stride, *padding, *dilation, not covered)
            return gx.transpose(0, 3, 1, 2)
        gx = np.empty((n, h * w, c), dtype=gy.dtype)
        run_kernel("max_pool2d_backward", False, kernels.max_pool2d_backward, gy_cl, offsets_cl, gx, w,
                   *kernel_size, *stride, *padding, *dilation)
        return gx.reshape(n, h, w, c).transpose(0, 3, 1, 2)
