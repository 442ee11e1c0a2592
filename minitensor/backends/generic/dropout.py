"""Dropout: random masks and their gradient."""
from __future__ import annotations

from typing import Any, Callable

Array = Any


class DropoutOps:
    xp: Any
    bernoulli: Callable[..., Array]  # from RandomOps

    def dropout(self, x: Array, p: float) -> tuple[Array, Array]:
        """-> (y, mask): each element kept with probability 1 - p (``mask`` True, from the backend's
        generator) and scaled by 1 / (1 - p) so that E[y] = x; p = 1 drops everything."""
        mask = self.bernoulli(1 - p, x.shape)
        y = x * mask
        if p < 1:
            y *= 1 / (1 - p)
        return y, mask

    def dropout_backward(self, gy: Array, mask: Array, p: float) -> Array:
        """gy * mask / (1 - p): the same scaling as forward, through the saved boolean mask."""
        gx = gy * mask
        if p < 1:
            gx *= 1 / (1 - p)
        return gx
