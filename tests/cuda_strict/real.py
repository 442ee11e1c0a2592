"""The installed real CuPy 14, imported once before the double takes its place in ``sys.modules``: every name
the double offers is resolved against it (a name real CuPy lacks is an AttributeError here too)."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import cupy as _cupy  # the real one: the double is installed only after this import
import cupyx as _cupyx
import cupyx.scipy.sparse as _cupyx_sparse
import cupyx.scipy.special as _cupyx_special

cupy: ModuleType = _cupy
cupyx: ModuleType = _cupyx
cupyx_special: ModuleType = _cupyx_special
cupyx_sparse: ModuleType = _cupyx_sparse
NDARRAY_NAMES: frozenset[str] = frozenset(n for n in dir(_cupy.ndarray) if not n.startswith("__"))
ufunc: type = _cupy.ufunc


def stash() -> dict[str, Any]:
    """Take every real ``cupy*`` module out of sys.modules (so imports reach the double), returning them."""
    taken = {k: sys.modules.pop(k) for k in list(sys.modules)
             if k.split(".")[0] in ("cupy", "cupyx", "cupy_backends")}
    return taken
