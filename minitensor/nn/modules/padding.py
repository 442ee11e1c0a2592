"""Padding layers: ``F.pad`` with a fixed mode and amounts, one class per mode and number of padded dims as
in PyTorch. ``padding`` is an int (every side) or (left, right[, top, bottom[, front, back]])."""
from __future__ import annotations

from typing import Sequence

from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import dim_variants


class _PadNd(Module):
    mode = "constant"
    _dims = 1

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self._dims)
        self.padding = tuple(padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = dim_variants(
    _PadNd, "ReflectionPad{n}d", "Pads the last {n} dim(s) with their mirror image (the edge not repeated).",
    __name__, mode="reflect")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = dim_variants(
    _PadNd, "ReplicationPad{n}d", "Pads the last {n} dim(s) by repeating the edge values.", __name__,
    mode="replicate")
CircularPad1d, CircularPad2d, CircularPad3d = dim_variants(
    _PadNd, "CircularPad{n}d", "Pads the last {n} dim(s) by wrapping around.", __name__, mode="circular")
ConstantPad1d, ConstantPad2d, ConstantPad3d = dim_variants(
    _ConstantPadNd, "ConstantPad{n}d", "Pads the last {n} dim(s) with ``value``.", __name__)
ZeroPad1d, ZeroPad2d, ZeroPad3d = dim_variants(_ZeroPadNd, "ZeroPad{n}d", "Pads the last {n} dim(s) with zeros.",
                                               __name__)
