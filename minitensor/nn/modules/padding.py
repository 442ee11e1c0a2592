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


def _layers(prefix: str, base: type[_PadNd], mode: str, doc: str) -> tuple[type[_PadNd], ...]:
    """The 1-, 2- and 3-d layers of one mode (``prefix`` + 'Pad1d' ...), as PyTorch names them."""
    return tuple(type(f"{prefix}Pad{n}d", (base,), {"mode": mode, "dims": n, "__module__": __name__,
                                                   "__doc__": f"Pads the last {n} dim(s) {doc}."})
                 for n in (1, 2, 3))


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _layers("Reflection", _PadNd, "reflect",
                                                            "with their mirror image (the edge not repeated)")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _layers("Replication", _PadNd, "replicate",
                                                               "by repeating the edge values")
CircularPad1d, CircularPad2d, CircularPad3d = _layers("Circular", _PadNd, "circular", "by wrapping around")
ConstantPad1d, ConstantPad2d, ConstantPad3d = _layers("Constant", _ConstantPadNd, "constant", "with ``value``")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _layers("Zero", _ZeroPadNd, "constant", "with zeros")
