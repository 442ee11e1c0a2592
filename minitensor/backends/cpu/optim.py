"""The CPU's optimizer updates: ``generic/optim.py``'s ``FusedOptimOps`` front end over one Numba-compiled
loop per optimizer (``numba_kernels/optim.py``).

The NumPy bodies make about a dozen passes over each array, one per ufunc; a loop reads and writes each
element once, which makes Adam about 3x faster on a parameter that fits in the cache (100k floats) and
about 5x on one that does not (1M floats, memory-bound). Without numba (or with ``MINITENSOR_NUMBA=0``)
every update takes the NumPy body. Numba is not loaded by this module: the loops' module is imported (and
numba with it) at the first update, never at ``import minitensor``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .. import compiled
from ..generic.optim import FusedOptimOps
from .numba_kernels import load


def kernels() -> Any:
    """The compiled loops' module, or None when numba is not installed or ``MINITENSOR_NUMBA=0``."""
    return load("optim")


class CpuOptimOps(FusedOptimOps):
    """``FusedOptimOps`` with the CPU loops ``<name>_kernel`` of ``numba_kernels/optim.py``."""

    def _fused_kernel(self, name: str) -> Callable[..., None] | None:
        module = kernels()
        if module is None:
            return None
        loop = getattr(module, f"{name}_kernel")  # reported to the profiler while one records
        return loop if compiled.launch_hook is None else functools.partial(compiled.run_kernel, loop.__name__,
                                                                           False, loop)
