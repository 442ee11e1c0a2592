"""Optional Numba-compiled CPU kernels for the NumPy backend: ``conv_pool.py`` (col2im, max pooling).

Nothing here imports numba at ``import minitensor``: the kernels' module is imported at its first use,
and without Numba (or with ``MINITENSOR_NUMBA=0`` in the environment) the backend runs its NumPy bodies.
Numba compiles each kernel on its first call for a dtype and array layout and caches it on disk.
"""
from __future__ import annotations

import functools
import os
from types import ModuleType


@functools.cache
def load() -> ModuleType | None:
    """The ``conv_pool`` kernels, imported once; None when numba is absent or MINITENSOR_NUMBA=0."""
    if os.environ.get("MINITENSOR_NUMBA", "1") == "0":
        return None
    try:
        from . import conv_pool
    except ImportError:  # numba not installed (or broken): the NumPy bodies serve
        return None
    return conv_pool
