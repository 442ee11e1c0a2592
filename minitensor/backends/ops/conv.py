"""Convolutions: ``conv2d`` and ``conv_transpose2d`` with their backward passes.

Shapes: x (N, C_in, H, W); conv2d weight (C_out, C_in/groups, kH, kW); conv_transpose2d weight
(C_in, C_out/groups, kH, kW); bias (C_out,) or None. ``padding`` is (top, bottom, left, right) for
conv2d (asymmetric "same" padding is resolved by the caller) and (pH, pW) for conv_transpose2d.
"""
from __future__ import annotations

from typing import Any

Array = Any


class ConvOps:
    xp: Any

    def conv2d(self, x: Array, weight: Array, bias: Array | None, stride: tuple[int, int],
               padding: tuple[int, int, int, int], dilation: tuple[int, int], groups: int) -> Array:
        raise NotImplementedError("conv2d: the NumPy body arrives with the layers issue (#3)")

    def conv2d_backward(self, gy: Array, x: Array, weight: Array, stride: tuple[int, int],
                        padding: tuple[int, int, int, int], dilation: tuple[int, int], groups: int,
                        needs: tuple[bool, bool, bool]) -> tuple[Array | None, Array | None, Array | None]:
        """-> (gx, gweight, gbias), None where ``needs`` is False."""
        raise NotImplementedError("conv2d_backward: the NumPy body arrives with the layers issue (#3)")

    def conv_transpose2d(self, x: Array, weight: Array, bias: Array | None, stride: tuple[int, int],
                         padding: tuple[int, int], output_padding: tuple[int, int],
                         dilation: tuple[int, int], groups: int) -> Array:
        raise NotImplementedError("conv_transpose2d: the NumPy body arrives with the layers issue (#3)")

    def conv_transpose2d_backward(self, gy: Array, x: Array, weight: Array, stride: tuple[int, int],
                                  padding: tuple[int, int], output_padding: tuple[int, int],
                                  dilation: tuple[int, int], groups: int,
                                  needs: tuple[bool, bool, bool]
                                  ) -> tuple[Array | None, Array | None, Array | None]:
        """-> (gx, gweight, gbias), None where ``needs`` is False."""
        raise NotImplementedError("conv_transpose2d_backward arrives with the layers issue (#3)")
