"""Optional Numba-compiled CPU kernels for the NumPy backend, one module per family: ``conv.py`` (col2im),
``pooling.py`` (max pooling), ``activation.py`` (ReLU), ``embedding.py`` (the gradient's row scatter) and
``optim.py`` (the optimizer updates, one loop each), among others. The CPU's own ``<family>.py`` calls
them; the only Numba imports on the CPU live in this folder.

Nothing here imports numba at ``import minitensor``: the kernels' module is imported at its first use,
and without Numba (or with ``MINITENSOR_NUMBA=0`` in the environment) the backend runs its NumPy bodies.
Numba compiles each kernel on its first call for a dtype and array layout and caches it on disk.
"""
from __future__ import annotations

import functools
import os
import importlib
import importlib.metadata
from types import ModuleType


@functools.cache
def load(module: str) -> ModuleType | None:
    """The kernels' module ``module`` of this package, imported once; None when numba is absent or
    MINITENSOR_NUMBA=0."""
    if os.environ.get("MINITENSOR_NUMBA", "1") == "0":
        return None
    try:
        return importlib.import_module(f"{__name__}.{module}")
    except ImportError as e:  # numba not installed (or broken): the NumPy bodies serve
        if e.name is not None and e.name.startswith(__name__):
            raise  # our own module missing is a bug, not an absent numba
        return None


def numba_version() -> str | None:
    """The version of the Numba that compiles these kernels, or None when the NumPy bodies run."""
    return None if load("conv") is None else importlib.metadata.version("numba")
