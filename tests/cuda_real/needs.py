"""The module-level skip of these tests: the real CUDA packages (the ``cuda-check`` extra) or nothing."""
from __future__ import annotations

import importlib
from typing import Any

import pytest


def module(name: str) -> Any:
    """``name`` imported, or this test module skipped: absent, or installed but not importable (a CuPy that
    cannot load its CUDA libraries raises ImportError, not ModuleNotFoundError)."""
    try:
        imported = importlib.import_module(name)
    except ImportError as error:
        pytest.skip(f"needs {name} (pip install -e '.[cuda-check]'): {error}", allow_module_level=True)
    if name.startswith("numba") and importlib.import_module("numba").config.ENABLE_CUDASIM:
        pytest.skip("numba.cuda is the simulator here (NUMBA_ENABLE_CUDASIM=1)", allow_module_level=True)
    return imported
