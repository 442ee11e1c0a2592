"""Pooling over (N, C, H, W): max (with argmax), average, adaptive average."""
from __future__ import annotations

from typing import Any

Array = Any


class PoolOps:
    xp: Any

    def max_pool2d(self, x: Array, kernel_size: tuple[int, int], stride: tuple[int, int],
                   padding: tuple[int, int], dilation: tuple[int, int], ceil_mode: bool
                   ) -> tuple[Array, Array]:
        """-> (y, indices): indices are int64 flat positions in each input H*W plane, as PyTorch's."""
        raise NotImplementedError("max_pool2d arrives with the layers issue (#3)")

    def max_pool2d_backward(self, gy: Array, indices: Array, x_shape: tuple[int, ...]) -> Array:
        raise NotImplementedError("max_pool2d_backward arrives with the layers issue (#3)")

    def avg_pool2d(self, x: Array, kernel_size: tuple[int, int], stride: tuple[int, int],
                   padding: tuple[int, int], ceil_mode: bool, count_include_pad: bool,
                   divisor_override: int | None) -> Array:
        raise NotImplementedError("avg_pool2d arrives with the layers issue (#3)")

    def avg_pool2d_backward(self, gy: Array, x_shape: tuple[int, ...], kernel_size: tuple[int, int],
                            stride: tuple[int, int], padding: tuple[int, int], ceil_mode: bool,
                            count_include_pad: bool, divisor_override: int | None) -> Array:
        raise NotImplementedError("avg_pool2d_backward arrives with the layers issue (#3)")

    def adaptive_avg_pool2d(self, x: Array, output_size: tuple[int, int]) -> Array:
        raise NotImplementedError("adaptive_avg_pool2d arrives with the layers issue (#3)")

    def adaptive_avg_pool2d_backward(self, gy: Array, x_shape: tuple[int, ...]) -> Array:
        raise NotImplementedError("adaptive_avg_pool2d_backward arrives with the layers issue (#3)")
