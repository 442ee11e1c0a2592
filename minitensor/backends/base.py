"""The one backend interface. Every op the library has is a method here, grouped by family (see ``generic/``).

A backend is a subclass that sets ``xp`` (an array module with NumPy's API) and overrides only the
methods where its own kernel pays, calling ``super()`` for the cases it does not cover.
"""
from __future__ import annotations

from typing import Any

from .generic.activation import ActivationOps
from .generic.amp import AmpOps
from .generic.arithmetic import ComparisonOps
from .generic.array import ArrayOps
from .generic.attention import AttentionOps
from .generic.conv import ConvOps
from .generic.ctc import CTCOps
from .generic.dropout import DropoutOps
from .generic.embedding import EmbeddingOps
from .generic.math import ElementwiseOps
from .generic.linalg import LinalgOps
from .generic.loss import LossOps
from .generic.lu_decomposition import LuOps
from .generic.matrix_functions import MatrixExpOps
from .generic.normalization import NormOps
from .generic.optim import OptimOps
from .generic.pooling import PoolOps
from .generic.random import RandomOps
from .generic.recurrent import RecurrentOps
from .generic.reduce import ReduceOps
from .generic.shape import ShapeOps
from .generic.factorization import FactorizationOps
from .generic.solve import SolveOps
from .generic.sparse import SparseOps
from .generic.searching import SearchOps
from .generic.special import SpecialOps


class Backend(ArrayOps, RandomOps, ElementwiseOps, ComparisonOps, ReduceOps, ShapeOps, LinalgOps, ActivationOps,
              ConvOps, PoolOps, NormOps, LossOps, DropoutOps, EmbeddingOps, OptimOps,
              SolveOps, FactorizationOps, LuOps, MatrixExpOps, SparseOps, AmpOps,
              SearchOps, SpecialOps, RecurrentOps, CTCOps, AttentionOps):
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
    def unavailable_reason(cls) -> str:
        """Why ``is_available()`` is False and what to install or do ("" when available)."""
        return ""

    @classmethod
    def device_count(cls) -> int:
        return 1 if cls.is_available() else 0

    def synchronize(self) -> None:
        """Wait for queued work to finish (a no-op on the CPU)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(index={self.index})"
