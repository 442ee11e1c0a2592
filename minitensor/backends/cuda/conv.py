"""The convolution hooks on CUDA: ``im2col`` and ``col2im`` are the kernels of ``kernels/conv.cu``; the GEMMs
stay the generic ones (cuBLAS through CuPy), so conv2d, conv_transpose2d and their backward all run on them."""
from __future__ import annotations

from typing import Any, Sequence

from ..generic.conv import ConvOps, Pad4, Pair, col2im_kernel
from . import rawmodule
from .rawmodule import RawKernelOps, longs

Array = Any


class CudaConvOps(RawKernelOps, ConvOps):
    """The two index hooks of ``ConvOps`` as kernels (float32 and float64)."""

    def im2col(self, x: Array, kernel: Sequence[int], stride: Pair, padding: Pad4, dilation: Pair,
                out_hw: Sequence[int], groups: int) -> Array:
        if not self._fits("im2col", x):
            return super().im2col(x, kernel, stride, padding, dilation, out_hw, groups)
        xp = self.xp
        x = xp.ascontiguousarray(x)
        n, c, h, w = x.shape
        cols = xp.empty((groups, c // groups * kernel[0] * kernel[1], n, out_hw[0] * out_hw[1]),
                        dtype=x.dtype)
        rawmodule.launch("im2col", x.dtype, cols.size,
                         (x, cols, *longs(n, c, h, w, *kernel, *out_hw, *stride, padding[0], padding[2], *dilation)))
        return cols

    def col2im(self, gy2: Array, gy_hw: Sequence[int], weight: Array | None, x_shape: Sequence[int],
               stride: Pair, padding: Pad4, dilation: Pair, groups: int, kernel: Sequence[int] | None = None
               ) -> Array:
        if not self._fits("col2im", gy2, *([] if weight is None else [weight])):
            return super().col2im(gy2, gy_hw, weight, x_shape, stride, padding, dilation, groups, kernel)
        xp = self.xp
        n, c, h, w = x_shape
        k_h, k_w = col2im_kernel(weight, kernel)
        # cols (G, N*oH*oW, Cg*kH*kW): each group's gy rows times that group's weights, one batched GEMM
        # (without a weight, gy2's rows are the columns)
        rows = gy2.reshape(-1, groups, gy2.shape[1] // groups).transpose(1, 0, 2)
        cols = xp.ascontiguousarray(rows if weight is None else xp.matmul(
            rows, weight.reshape(groups, weight.shape[0] // groups, c // groups * k_h * k_w)))
        gx = xp.empty((n, c, h, w), dtype=gy2.dtype)
        rawmodule.launch("col2im", gx.dtype, gx.size,
                         (cols, gx, *longs(n, c, h, w, groups, k_h, k_w, *gy_hw, *stride, padding[0], padding[2],
                                            *dilation)))
        return gx
