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

    def __enter__(self) -> "device":
        """``with device("cuda"):``: factory functions called inside without a device create there."""
        _defaults.stack.append(_defaults.context)
        _defaults.context = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _defaults.context = _defaults.stack.pop()


cpu = device("cpu")


class _Defaults(threading.local):
    """Where factory functions create without a ``device=``: per thread, as PyTorch's device context.
    ``context``: set by ``set_default_device`` / ``with device(...)`` (it also moves ``tensor(t)``'s data);
    ``type_device``: by ``set_default_tensor_type`` ('torch.cuda.FloatTensor')."""
    context: "device | None" = None
    type_device: "device | None" = None

    def __init__(self) -> None:
        self.stack: list["device | None"] = []


_defaults = _Defaults()


def as_device(d: "str | device | None") -> device:
    """``d`` as a device; None: the default device (``set_default_device``), the CPU unless one was set."""
    if d is None:
        return _defaults.context or _defaults.type_device or cpu
    return device(d)


def context_device() -> "device | None":
    """The device ``set_default_device`` / ``with device(...)`` chose, None when none was."""
    return _defaults.context


def set_default_device(d: "str | device | int | None") -> None:
    """Factory functions called without ``device=`` create on ``d`` (None: back to the CPU); an int is a
    CUDA index, as PyTorch's accelerator index. ``*_like`` functions and ``from_numpy`` keep their input's."""
    dev = None
    if isinstance(d, int) and not isinstance(d, bool):
        dev = device("cuda", d)
    elif isinstance(d, (str, device)):
        dev = device(d)
    elif d is not None:
        raise TypeError(f"set_default_device() takes a device, a string or an index, got {type(d).__name__}")
    # (no backend is loaded here: as PyTorch, naming a missing CUDA device raises at the first factory call)
    _defaults.context = dev


def get_default_device() -> device:
    """The device factory functions create on without ``device=``."""
    return as_device(None)


def set_type_device(d: "device | None") -> None:
    _defaults.type_device = d
