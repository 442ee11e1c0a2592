"""``Flatten`` and ``Unflatten``."""
from __future__ import annotations

from typing import Sequence

from ...tensor import Tensor
from .module import Module


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) with the defaults."""

    _repr_options = ("start_dim", "end_dim")

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size``: (N, 12) -> (N, 3, 4) for dim=1, size (3, 4)."""

    _repr_options = ("dim", "unflattened_size")

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or \
                not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found {unflattened_size!r}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)
