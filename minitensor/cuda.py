"""``minitensor.cuda``: whether a CUDA device can be used, without ever raising or touching a GPU at import.

The CUDA backend (``minitensor.backends.cuda``) arrives with its own issue; until it is installed these
report no device, and asking for ``device("cuda")`` raises an error that says what is missing.
"""
from __future__ import annotations

import importlib.util

from .backends import backend_class


def _cuda_backend_class() -> type | None:
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        return backend_class("cuda")
    except Exception:  # a broken or missing CUDA stack means "not available", never an error here
        return None


def is_available() -> bool:
    """True when CuPy, an NVIDIA driver and at least one GPU are present."""
    cls = _cuda_backend_class()
    try:
        return bool(cls is not None and cls.is_available())
    except Exception:
        return False


def device_count() -> int:
    cls = _cuda_backend_class()
    try:
        return int(cls.device_count()) if cls is not None and cls.is_available() else 0
    except Exception:
        return 0


def manual_seed(seed: int) -> None:
    """Seed the generators of the CUDA devices that are in use."""
    from .backends import loaded_backends
    for b in loaded_backends():
        if b.name == "cuda":
            b.seed(seed)


manual_seed_all = manual_seed
