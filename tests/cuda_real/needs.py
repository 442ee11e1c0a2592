"""The module-level skip of these tests: the real CUDA packages (the ``cuda-check`` extra) or nothing."""
from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

import pytest


def module(name: str) -> Any:
    """``name`` imported, or this test module skipped: absent, or installed but not importable (a CuPy that
    cannot load its CUDA libraries raises ImportError, not ModuleNotFoundError)."""
    try:
        imported = importlib.import_module(name)
    except ImportError as error:
        pytest.skip(f"needs {name} (pip install -e '.[cuda-check]'): {error}", allow_module_level=True)
    if name.startswith("numba.cuda"):
        try:  # numba's own deprecated numba.cuda imports too, but is not what a GPU machine runs
            importlib.metadata.version("numba-cuda")
        except importlib.metadata.PackageNotFoundError:
            pytest.skip("needs the numba-cuda package (pip install -e '.[cuda-check]'), not numba's built-in "
                        "numba.cuda", allow_module_level=True)
        if importlib.import_module("numba").config.ENABLE_CUDASIM:
            pytest.skip("numba.cuda is the simulator here (NUMBA_ENABLE_CUDASIM=1)", allow_module_level=True)
    return imported
