"""Pooling layers: ``MaxPool2d``, ``AvgPool2d``, ``AdaptiveAvgPool2d``."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class _Pool2d(Module):
    """The window every pooling layer slides: ``kernel_size``, ``stride`` (``kernel_size`` when None),
    ``padding`` and ``ceil_mode``."""

    def __init__(self, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode


class MaxPool2d(_Pool2d):
    """The maximum over each kernel window of (N, C, H, W); ``stride`` defaults to ``kernel_size``.
    ``return_indices=True`` also returns the flat (H*W) index of each maximum, for MaxUnpool."""

    _repr_options = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.dilation = dilation
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool2d(_Pool2d):
    """The mean over each kernel window; ``count_include_pad`` counts zero padding in the divisor and
    ``divisor_override`` replaces the divisor."""

    _repr_options = ("kernel_size", "stride", "padding")

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    """Averages (N, C, H, W) down to (N, C, *output_size) with windows chosen to cover the input;
    a None entry in ``output_size`` keeps that input size."""

    _repr_options = ("output_size",)

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)
