"""``PixelShuffle`` and ``PixelUnshuffle``: channels to space and back; ``ChannelShuffle``."""
from __future__ import annotations

from typing import Callable

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class _PixelRearrange(Module):
    """One integer factor, kept under PyTorch's attribute name (the one ``_repr_options`` names), handed to
    the functional form ``_rearrange``."""

    _rearrange: Callable[[Tensor, int], Tensor]

    def __init__(self, factor: int) -> None:
        super().__init__()
        setattr(self, self._repr_options[0], factor)

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._rearrange(input, getattr(self, self._repr_options[0]))


class PixelShuffle(_PixelRearrange):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""

    _repr_options = ("upscale_factor",)
    _rearrange = staticmethod(F.pixel_shuffle)

    def __init__(self, upscale_factor: int) -> None:
        super().__init__(upscale_factor)


class PixelUnshuffle(_PixelRearrange):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""

    _repr_options = ("downscale_factor",)
    _rearrange = staticmethod(F.pixel_unshuffle)

    def __init__(self, downscale_factor: int) -> None:
        super().__init__(downscale_factor)


class ChannelShuffle(_PixelRearrange):
    """(N, C, *) -> (N, C, *) with the channels of ``groups`` groups interleaved."""

    _repr_options = ("groups",)
    _rearrange = staticmethod(F.channel_shuffle)

    def __init__(self, groups: int) -> None:
        super().__init__(groups)
