"""The CPU's scans: NumPy's ``ufunc.accumulate``, one sequential O(n) pass, instead of the generic log-step
scan (``ReduceOps._scan``), which suits a GPU's parallelism but makes log2(n) passes over the data here."""
from __future__ import annotations

from typing import Any, Callable

from ..generic.reduce import ReduceOps

Array = Any


class CpuReduceOps(ReduceOps):
    def _scan(self, x: Array, axis: int, combine: Callable[[Array, Array], Array]) -> Array:
        return combine.accumulate(x, axis=axis)  # type: ignore[attr-defined]  # combine: a NumPy ufunc
