"""Padding layers: ``F.pad`` with a fixed mode and amounts, one class per mode and number of padded dims as
in PyTorch. ``padding`` is an int (every side) or (left, right[, top, bottom[, front, back]])."""
from __future__ import annotations

from typing import Sequence

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.dims)
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


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its mirror image (the edge not repeated)."""
    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    dims = 2


class ReflectionPad3d(ReflectionPad1d):
    dims = 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values."""
    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    dims = 2


class ReplicationPad3d(ReplicationPad1d):
    dims = 3


class CircularPad1d(_PadNd):
    """Pads the last dim by wrapping around."""
    mode = "circular"


class CircularPad2d(CircularPad1d):
    dims = 2


class CircularPad3d(CircularPad1d):
    dims = 3


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``."""


class ConstantPad2d(_ConstantPadNd):
    dims = 2


class ConstantPad3d(_ConstantPadNd):
    dims = 3


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros."""


class ZeroPad2d(_ZeroPadNd):
    dims = 2


class ZeroPad3d(_ZeroPadNd):
    dims = 3
