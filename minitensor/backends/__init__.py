"""Backends by device type, imported lazily: ``import minitensor`` never imports cupy or numba.

``register_backend("cuda", "minitensor.backends.cuda.backend:CudaBackend")`` names a backend by module path; it is
imported the first time a tensor asks for that device type, and one instance is kept per device index.
"""
from __future__ import annotations

import importlib
import warnings

from . import blas

blas.choose_openblas_coretype()  # before the first import of NumPy (the next line's): OpenBLAS reads it once
blas.choose_openblas_thread_timeout()  # (read once too)

# NumPy reports IEEE special cases (log(0), 0 / 0, sqrt(-1), overflow, a mean of nothing) as RuntimeWarnings;
# PyTorch computes them silently (inf, nan). Ignored where minitensor's own code makes the NumPy call (the
# warning's module is then one of ours); a user's own NumPy calls warn as before.
warnings.filterwarnings(
    "ignore", category=RuntimeWarning, module=r"minitensor(\.|$)",
    message=r"(divide by zero|invalid value|overflow|underflow) encountered|Mean of empty slice|"
            r"Degrees of freedom <= 0|All-NaN (slice|axis) encountered")
from . import cudnn, mps  # noqa: E402  (PyTorch's torch.backends.cudnn / .mps: flags and queries only)
from .base import Backend  # noqa: E402
from .blas import cpu_info  # noqa: E402
from .generic.random import seed_thread, thread_seed  # noqa: E402

_REGISTRY: dict[str, str] = {
    "cpu": "minitensor.backends.cpu.backend:NumpyBackend",
    "cuda": "minitensor.backends.cuda.backend:CudaBackend",
}
_INSTANCES: dict[tuple[str, int], Backend] = {}
_SEED = [0]  # the last manual_seed, which a backend created later starts from (as PyTorch's lazy CUDA init)


def register_backend(device_type: str, path: str) -> None:
    """Make ``device(device_type)`` use the Backend subclass at ``"module:Class"``."""
    _REGISTRY[device_type] = path


def backend_class(device_type: str) -> type[Backend]:
    """The Backend subclass for a device type; RuntimeError when its module cannot load (a missing CuPy,
    say), carrying the module's own message, which says what to install."""
    try:
        path = _REGISTRY[device_type]
    except KeyError:
        raise RuntimeError(f"unknown device type {device_type!r}; known: {sorted(_REGISTRY)}") from None
    module_name, _, class_name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise RuntimeError(f"device type {device_type!r} is not available: {e}") from e
    return getattr(module, class_name)


def get_backend(device_type: str, index: int = 0) -> Backend:
    """The one backend instance for (device_type, index), created on first use."""
    key = (device_type, index)
    backend = _INSTANCES.get(key)
    if backend is None:
        cls = backend_class(device_type)
        if not cls.is_available():
            why = cls.unavailable_reason()
            raise RuntimeError(f"device type {device_type!r} is not available" + (f": {why}" if why else ""))
        backend = _INSTANCES[key] = cls(index)
        backend.seed(_SEED[0])
    return backend


def seed_all(seed: int, device_type: str | None = None) -> None:
    """Seed every backend created so far (or those of ``device_type``), and every one created later, with
    ``seed``; in a DataLoader worker thread, only that thread's own generators (as in a PyTorch worker process)."""
    if thread_seed() is not None:
        seed_thread(seed)
        return
    _SEED[0] = seed
    for (kind, _), backend in _INSTANCES.items():
        if device_type is None or kind == device_type:
            backend.seed(seed)


def loaded_backends() -> list[Backend]:
    """Backends created so far (``manual_seed`` seeds each of them)."""
    return list(_INSTANCES.values())


__all__ = ["Backend", "cpu_info", "cudnn", "mps", "register_backend", "backend_class", "get_backend",
           "loaded_backends", "seed_all"]
