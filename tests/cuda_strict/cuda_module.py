"""``cupy.cuda`` of the strict double: one emulated GPU (device 0). Work runs synchronously on the host, so
streams and events are always done; an event's time is the host clock at ``record``. The memory pool counts the
bytes of the wrapper arrays alive (weak references), which is all the double can know."""
from __future__ import annotations

import itertools
import threading
import time
import weakref
from types import SimpleNamespace
from typing import Any

from . import real

_real_runtime = real.cupy.cuda.runtime
_handles = itertools.count(0x1000, 0x10)
_local = threading.local()


class CUDARuntimeError(RuntimeError):
    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__(f"cudaError {status}")


def _check_device(device: int) -> int:
    if device != 0:
        raise CUDARuntimeError(101)  # cudaErrorInvalidDevice
    return device


runtime = SimpleNamespace(
    getDevice=lambda: 0, getDeviceCount=lambda: 1, setDevice=_check_device,
    driverGetVersion=lambda: _real_runtime.runtimeGetVersion(),  # a driver as new as the runtime
    runtimeGetVersion=_real_runtime.runtimeGetVersion, CUDARuntimeError=CUDARuntimeError,
    streamPerThread=_real_runtime.streamPerThread, streamLegacy=_real_runtime.streamLegacy,
    getDeviceProperties=lambda i: {"name": b"strict CuPy double (emulated GPU)", "major": 9, "minor": 0,
                                   "totalGlobalMem": 1 << 34, "multiProcessorCount": 132},
    deviceCanAccessPeer=lambda a, b: 0, memGetInfo=lambda: (1 << 33, 1 << 34),
)


class Device:
    compute_capability = "90"  # the GPUs the project is lent (H100, H200): sm_90, as CuPy's string

    def __init__(self, device: Any = None) -> None:
        self.id = _check_device(0 if device is None else int(device))

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def use(self) -> None:
        return None

    def synchronize(self) -> None:
        return None


class Stream:
    """A stream handle; the double runs every kernel at once, so the stream is always ``done``."""

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False, priority: int = 0) -> None:
        self.ptr = 0 if null else (_real_runtime.streamPerThread if ptds else next(_handles))
        self.device_id = 0
        self.done = True

    def __enter__(self) -> Stream:
        stack = getattr(_local, "streams", None) or []
        stack.append(self)
        _local.streams = stack
        return self

    def __exit__(self, *exc: object) -> None:
        _local.streams.pop()

    def use(self) -> Stream:
        _local.streams = [self]
        return self

    def synchronize(self) -> None:
        return None

    def wait_event(self, event: Event) -> None:
        return None

    def record(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event


Stream.null = Stream(null=True)  # type: ignore[attr-defined]
Stream.ptds = Stream(ptds=True)  # type: ignore[attr-defined]


def get_current_stream(device_id: int | None = None) -> Stream:
    stack = getattr(_local, "streams", None)
    return stack[-1] if stack else Stream.null  # type: ignore[attr-defined]


class Event:
    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.ptr = next(_handles)
        self.disable_timing = disable_timing
        self.done = True
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        return None


def get_elapsed_time(start: Event, end: Event) -> float:
    if start.disable_timing or end.disable_timing or start._time is None or end._time is None:
        raise CUDARuntimeError(6)  # cudaErrorInvalidResourceHandle, as CUDA for untimed events
    return (end._time - start._time) * 1000.0


class MemoryPool:
    """Bytes of the device arrays alive (``used_bytes``) and the most held at once since ``free_all_blocks``
    (``total_bytes``: the double caches nothing, so reserved is the live bytes' high-water mark)."""

    def __init__(self) -> None:
        self._total = 0

    def used_bytes(self) -> int:
        from .ndarray import live_bytes
        used = live_bytes()
        self._total = max(self._total, used)
        return used

    def total_bytes(self) -> int:
        return max(self._total, self.used_bytes())

    def free_all_blocks(self) -> None:
        self._total = 0


class PinnedMemoryPool:
    def n_free_blocks(self) -> int:
        return 0

    def free_all_blocks(self) -> None:
        return None


_pinned: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def _is_memory_pinned(ptr: int) -> bool:
    return any(a.ctypes.data <= ptr < a.ctypes.data + max(a.nbytes, 1) for a in list(_pinned.values()))


pinned_memory = SimpleNamespace(is_memory_pinned=_is_memory_pinned)
