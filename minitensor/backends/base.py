"""The one backend interface. Every op the library has is a method here, grouped by family (see ``ops/``).

A backend is a subclass that sets ``xp`` (an array module with NumPy's API) and overrides only the
methods where its own kernel pays, calling ``super()`` for the cases it does not cover.
"""
from __future__ import annotations

from typing import Any

from .ops.activation import ActivationOps
from .ops.array import ArrayOps
from .ops.conv import ConvOps
from .ops.dropout import DropoutOps
from .ops.elementwise import ElementwiseOps
from .ops.linalg import LinalgOps
from .ops.loss import LossOps
from .ops.norm import NormOps
from .ops.optim import OptimOps
from .ops.pool import PoolOps
from .ops.random import RandomOps
from .ops.reduce import ReduceOps
from .ops.shape import ShapeOps


class Backend(ArrayOps, RandomOps, ElementwiseOps, ReduceOps, ShapeOps, LinalgOps, ActivationOps,
              ConvOps, PoolOps, NormOps, LossOps, DropoutOps, OptimOps):
    """Identity: ``name`` ("cpu", "cuda"), ``xp`` (the array module), availability and synchronisation."""

    name: str = "abstract"
    xp: Any = None
    array_type: type = object  # the array class of ``xp``; op results are coerced to it (never scalars)

    def __init__(self, index: int = 0) -> None:
        self.index = index
        self.seed(0)

    @classmethod
    def is_available(cls) -> bool:
        return False

    @classmethod
    def device_count(cls) -> int:
        return 1 if cls.is_available() else 0

    def synchronize(self) -> None:
        """Wait for queued work to finish (a no-op on the CPU)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(index={self.index})"
