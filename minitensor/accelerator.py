"""``minitensor.accelerator``: PyTorch 2.6+'s device-neutral ``torch.accelerator`` API, on ``minitensor.cuda``.

The one accelerator minitensor has is CUDA (CuPy). ``current_accelerator()`` is ``device("cuda")`` when a
usable GPU is present and None otherwise: PyTorch answers with the accelerator it was *compiled* for even
without a GPU, but minitensor has no build-time CUDA, so the runtime check is the only one
(docs/differences.md). So the usual idiom runs unchanged on either kind of machine::

    device = mt.accelerator.current_accelerator() if mt.accelerator.is_available() else mt.device("cpu")

Without an accelerator ``is_available()`` is False and ``device_count()`` 0 (neither raises), while the
functions that need one (``current_device_index``, ``set_device_index``, ``synchronize``, ``device_index``
with an index, the memory counters) raise PyTorch's RuntimeError.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

from . import cuda
from .device import device as _device

DeviceLike = int | str | _device | None
F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream",
           "device_count", "device_index", "empty_cache", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "synchronize"]

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def is_available() -> bool:
    """True when an accelerator (a CUDA GPU with CuPy) can run minitensor's ops. Never raises."""
    return cuda.is_available()


def device_count() -> int:
    """The number of accelerator devices; 0 without one. Never raises."""
    return cuda.device_count() if is_available() else 0


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device("cuda")`` when a GPU is usable, else None (``check_available`` changes nothing: minitensor's
    only check is the runtime one)."""
    return _device("cuda") if is_available() else None


def _accelerator() -> _device:
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError(_NO_ACCELERATOR)
    return acc


def _index_of(device: DeviceLike, optional: bool) -> int:
    """PyTorch's ``_get_device_index``: an int as is; a device (or its string) must be the accelerator's
    type; None (or a device without index, when ``optional``) means the current index."""
    if isinstance(device, int):
        return device
    if device is None:
        if not optional:
            raise ValueError(f"Expected a device with a specified index or an integer, but got:{device}")
        return current_device_index()
    acc = _accelerator()
    d = _device(device)
    if d.type != acc.type:
        raise ValueError(f"{d.type} doesn't match the current accelerator {acc}.")
    if isinstance(device, str) and ":" not in device:  # "cuda" has no index (minitensor's device() says 0)
        return _index_of(None, optional)
    return d.index  # type: ignore[return-value]


def current_device_index() -> int:
    """The index of the current accelerator device (the one raw CuPy calls use in this thread)."""
    _accelerator()
    return cuda.current_device()


def set_device_index(device: DeviceLike, /) -> None:
    """Make ``device`` (an index, "cuda:N" or a device) the current device; a negative index is a no-op."""
    _accelerator()
    index = _index_of(device, optional=False)
    if index >= 0:
        cuda.set_device(index)


def synchronize(device: DeviceLike = None, /) -> None:
    """Wait until all work queued on ``device`` (default: the current one) has finished."""
    _accelerator()
    cuda.synchronize(_index_of(device, optional=True))


def current_stream(device: DeviceLike = None, /) -> cuda.Stream:
    """The stream minitensor's ops on ``device`` (default: the current one) queue their work on."""
    _accelerator()
    return cuda.current_stream(_index_of(device, optional=True))


class device_index:
    """``with device_index(i):`` makes device ``i`` current inside the block and restores the previous one
    after; ``device_index(None)`` changes nothing."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)


def _deprecated(new: F, old_name: str) -> F:
    """``new`` under its old name, warning (FutureWarning, as PyTorch) at each call."""
    @functools.wraps(new)
    def old(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"Use `{new.__name__}` instead.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = old.__qualname__ = old_name
    return old  # type: ignore[return-value]


current_device_idx = _deprecated(current_device_index, "current_device_idx")
set_device_idx = _deprecated(set_device_index, "set_device_idx")


def _memory(counter: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.accelerator``'s memory function of the same name, on ``minitensor.cuda``'s counters."""
    @functools.wraps(counter)
    def on_accelerator(device: DeviceLike = None, /) -> Any:
        _accelerator()
        return counter(_index_of(device, optional=True))
    return on_accelerator


memory_allocated = _memory(cuda.memory_allocated)
max_memory_allocated = _memory(cuda.max_memory_allocated)
memory_reserved = _memory(cuda.memory_reserved)
max_memory_reserved = _memory(cuda.max_memory_reserved)
reset_peak_memory_stats = _memory(cuda.reset_peak_memory_stats)


def empty_cache() -> None:
    """Give the memory pool's cached blocks back to the driver (``minitensor.cuda.empty_cache``)."""
    _accelerator()
    cuda.empty_cache()
