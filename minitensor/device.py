"""``device("cpu")``, ``device("cuda:1")``: a device type and index, owning its backend (made on first use)."""
from __future__ import annotations

import threading
from typing import Any

from .backends import Backend, get_backend


class device:
    """Interned: ``device("cuda:0") is device("cuda", 0)``, so tensors compare devices by identity."""

    # ``backend`` is a slot filled on first use by ``__getattr__`` (a plain attribute read afterwards: every
    # op reads it, and a property would cost a call each time).
    __slots__ = ("type", "index", "backend")
    type: str
    index: int | None
    backend: Backend
    _cache: dict[tuple[str, int | None], "device"] = {}

    def __new__(cls, type_or_spec: "str | device", index: int | None = None) -> "device":
        if isinstance(type_or_spec, device):
            return type_or_spec
        if not isinstance(type_or_spec, str):
            raise TypeError(f"device() takes a string like 'cpu' or 'cuda:0', got {type_or_spec!r}")
        dtype_, _, idx = type_or_spec.strip().partition(":")
        if idx:
            if index is not None:
                raise ValueError(f"device {type_or_spec!r} already has an index; got index={index} too")
            if not idx.isdigit():
                raise ValueError(f"invalid device string {type_or_spec!r}: the index must be a number")
            index = int(idx)
        if dtype_ not in ("cpu", "cuda"):
            raise RuntimeError(f"unknown device type {dtype_!r} in {type_or_spec!r}; use 'cpu' or 'cuda[:N]'")
        if dtype_ == "cuda" and index is None:
            index = 0  # minitensor has no "current device" state; bare cuda means cuda:0
        if dtype_ == "cpu":
            index = None
        key = (dtype_, index)
        dev = cls._cache.get(key)
        if dev is None:
            dev = object.__new__(cls)
            dev.type, dev.index = dtype_, index
            cls._cache[key] = dev
        return dev

    def __getattr__(self, name: str) -> Backend:
        """Loads ``backend``, the backend that runs this device's ops, at its first read (called only while
        the slot is empty); get_backend's RuntimeError names the device type and what is missing."""
        if name != "backend":
            raise AttributeError(f"'device' object has no attribute {name!r}")
        b = self.backend = get_backend(self.type, self.index or 0)
        return b

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple:
        return (device, (str(self),))


cpu = device("cpu")

# ``set_default_device``'s device, per thread as PyTorch's (a new thread starts with none set: CPU)
_default = threading.local()


def set_default_device(d: "str | device | int | None") -> None:
    """The device the factory functions (``zeros``, ``randn``, ``tensor``, ``arange``, ...) use when given no
    ``device``; ``None`` unsets it (CPU again). An int is a CUDA index, as in PyTorch."""
    _default.device = None if d is None else device("cuda", d) if isinstance(d, int) else device(d)


def get_default_device() -> device:
    """``set_default_device``'s device (``cuda`` reads as ``cuda:0``), else ``cpu``."""
    return explicit_default_device() or cpu


def explicit_default_device() -> "device | None":
    """The device ``set_default_device`` set in this thread, or None where none is set (PyTorch's factories
    then keep a tensor argument's device: ``tensor(t)`` stays on ``t``'s)."""
    return getattr(_default, "device", None)


def as_device(d: "str | device | None") -> device:
    """``d`` as a device; None is the default device (``set_default_device``, else CPU)."""
    return device(d) if d is not None else (getattr(_default, "device", None) or cpu)
