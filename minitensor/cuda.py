"""``minitensor.cuda``: PyTorch's ``torch.cuda`` API on CuPy - availability, devices, synchronisation, the
memory pool's counters, streams and events.

``is_available``, ``device_count`` and ``manual_seed`` never raise; everything else needs a GPU and raises a
RuntimeError saying what is missing (CuPy, a driver or a GPU) when there is none. CuPy is imported inside the
functions, so ``import minitensor`` never imports it.

Streams: minitensor's CUDA ops queue their kernels on CuPy's current stream (one per thread and device), so
``with minitensor.cuda.stream(s):`` runs them on ``s``. Streams made here are non-blocking, as PyTorch's are:
they do not wait for the legacy default stream, so order work across streams with events
(``Stream.wait_event``, ``Stream.wait_stream``).

Memory: the counters read CuPy's default memory pool, from which the CUDA backend allocates.
``memory_allocated`` is the bytes in live arrays (``used_bytes``), ``memory_reserved`` the bytes the pool
holds from the driver, live or cached (``total_bytes``). CuPy keeps no high-water mark, and keeping one
exactly puts a Python call on every allocation (a ``cupy.cuda.MemoryHook``, or a Python allocator wrapped
around the pool). So the peaks cost nothing per op and are measured thus:

- ``max_memory_reserved`` is exact: the pool only grows until blocks are released, and ``empty_cache`` folds
  the value in before it releases them. (CuPy also releases cached blocks itself when an allocation fails,
  as does a direct call of the pool's ``free_all_blocks``; a peak from before such a release is kept only
  if it was read before.)
- ``max_memory_allocated`` is the largest ``used_bytes`` seen at the points where minitensor reads the pool:
  every call of the memory functions here and of ``synchronize()``. It is a lower bound of the true peak,
  exact when the peak is read (call ``memory_allocated()`` or ``synchronize()`` where you expect it, e.g.
  after the forward pass); ``max_memory_reserved`` bounds the true peak from above.
"""
from __future__ import annotations

import contextlib
import importlib.util
from typing import Any, Iterator, Union

import numpy as np

from .backends import backend_class, loaded_backends
from .device import device as _device

DeviceLike = Union[int, str, _device, None]

_known_available = False  # a GPU found once stays found: is_available() is then one global read


# ---------------------------------------------------------------------------------------- availability
def _cuda_backend_class() -> type | None:
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        return backend_class("cuda")
    except Exception:  # a broken or missing CUDA stack means "not available", never an error here
        return None


def is_available() -> bool:
    """True when CuPy, an NVIDIA driver and at least one GPU are present."""
    global _known_available
    if not _known_available:
        cls = _cuda_backend_class()
        try:
            _known_available = bool(cls is not None and cls.is_available())
        except Exception:
            return False
    return _known_available


def device_count() -> int:
    cls = _cuda_backend_class()
    try:
        return int(cls.device_count()) if cls is not None and cls.is_available() else 0
    except Exception:
        return 0


def manual_seed(seed: int) -> None:
    """Seed the generators of the CUDA devices that are in use."""
    for b in loaded_backends():
        if b.name == "cuda":
            b.seed(seed)


manual_seed_all = manual_seed


def _unavailable_reason() -> str:
    try:
        reason = backend_class("cuda").unavailable_reason()
    except RuntimeError as e:  # the backend module did not load: its ImportError says what to install
        reason = str(e.__cause__ or e)
    return f"CUDA is not available: {reason}"


def _cupy() -> Any:
    """The cupy module, or the RuntimeError that says why CUDA cannot be used."""
    if not is_available():
        raise RuntimeError(_unavailable_reason())
    import cupy
    return cupy


def _device_index(device: DeviceLike) -> int:
    """The CUDA device index of an int, "cuda:N", a device, or None (CuPy's current device)."""
    cp = _cupy()
    if device is None:
        return cp.cuda.runtime.getDevice()
    if isinstance(device, int):
        index = device
    else:
        d = _device(device)
        if d.type != "cuda":
            raise ValueError(f"expected a cuda device, got '{d}'")
        index = d.index
    count = device_count()
    if not 0 <= index < count:
        raise ValueError(f"invalid CUDA device index {index}: this machine has {count} CUDA device(s)")
    return index


# --------------------------------------------------------------------------------------------- devices
def current_device() -> int:
    """The index of the current CUDA device (CuPy's, per thread)."""
    return _device_index(None)


def set_device(device: DeviceLike) -> None:
    """Make ``device`` CuPy's current device in this thread (where raw CuPy calls allocate and launch).
    minitensor's own ``device("cuda")`` means cuda:0 (see ``minitensor.device``): name ``cuda:N`` for
    the others."""
    _cupy().cuda.Device(_device_index(device)).use()


def synchronize(device: DeviceLike = None) -> None:
    """Wait until every stream of ``device`` (default: the current one) has finished its queued work."""
    cp = _cupy()
    index = _device_index(device)
    cp.cuda.Device(index).synchronize()
    _read_pool(index)


# ---------------------------------------------------------------------------------------------- memory
_peak_allocated: dict[int, int] = {}
_peak_reserved: dict[int, int] = {}


def _read_pool(index: int) -> tuple[int, int]:
    """(used, reserved) bytes of CuPy's default pool on device ``index``, folded into the peaks."""
    cp = _cupy()
    pool = cp.get_default_memory_pool()
    with cp.cuda.Device(index):  # the pool's counters are those of the current device
        used, reserved = pool.used_bytes(), pool.total_bytes()
    _peak_allocated[index] = max(_peak_allocated.get(index, 0), used)
    _peak_reserved[index] = max(_peak_reserved.get(index, 0), reserved)
    return used, reserved


def memory_allocated(device: DeviceLike = None) -> int:
    """Bytes held by live arrays on ``device`` (CuPy's pool ``used_bytes``)."""
    return _read_pool(_device_index(device))[0]


def memory_reserved(device: DeviceLike = None) -> int:
    """Bytes the pool holds from the driver on ``device``, in live arrays or cached for reuse."""
    return _read_pool(_device_index(device))[1]


def max_memory_allocated(device: DeviceLike = None) -> int:
    """The largest ``memory_allocated`` seen since the start or ``reset_peak_memory_stats``: a lower bound
    of the true peak, exact when the peak was read (see the module docstring)."""
    index = _device_index(device)
    _read_pool(index)
    return _peak_allocated[index]


def max_memory_reserved(device: DeviceLike = None) -> int:
    """The peak of ``memory_reserved`` since the start or ``reset_peak_memory_stats`` (exact; see the module
    docstring)."""
    index = _device_index(device)
    _read_pool(index)
    return _peak_reserved[index]


def reset_peak_memory_stats(device: DeviceLike = None) -> None:
    """Restart both peaks from the current values."""
    index = _device_index(device)
    _peak_allocated.pop(index, None)
    _peak_reserved.pop(index, None)
    _read_pool(index)


def empty_cache() -> None:
    """Give the pool's cached (unused) blocks back to the driver on every device minitensor has used and the
    current one; live arrays keep theirs. Other processes and ``nvidia-smi`` then see the memory free."""
    cp = _cupy()
    pool = cp.get_default_memory_pool()
    indices = {b.index for b in loaded_backends() if b.name == "cuda"} | {current_device()}
    for index in sorted(indices):
        _read_pool(index)  # the reserved peak, before the release lowers the pool's total
        with cp.cuda.Device(index):
            pool.free_all_blocks()


# --------------------------------------------------------------------------------------------- streams
class Stream:
    """A CUDA stream on one device, like ``torch.cuda.Stream``: a ``cupy.cuda.Stream`` created non-blocking.

    ``priority``: lower numbers run first where the hardware supports it (0 is the default).
    """

    def __init__(self, device: DeviceLike = None, priority: int = 0) -> None:
        cp = _cupy()
        index = _device_index(device)
        with cp.cuda.Device(index):
            cupy_stream = cp.cuda.Stream(non_blocking=True, priority=priority)
        self._init(cupy_stream, index)

    def _init(self, cupy_stream: Any, index: int) -> None:
        self._stream = cupy_stream
        self.device = _device("cuda", index)

    @classmethod
    def _of(cls, cupy_stream: Any, index: int) -> "Stream":
        """A Stream around an existing CuPy stream (the current or the default one)."""
        s = cls.__new__(cls)
        s._init(cupy_stream, index)
        return s

    @property
    def cuda_stream(self) -> int:
        """The raw ``cudaStream_t`` handle."""
        return self._stream.ptr

    def query(self) -> bool:
        """True when all work queued on this stream has finished."""
        return self._stream.done

    def synchronize(self) -> None:
        """Wait on the host until this stream's queued work has finished."""
        self._stream.synchronize()

    def wait_event(self, event: "Event") -> None:
        """Work queued on this stream from now on starts after ``event`` (no host wait)."""
        if event._event is not None:  # an event never recorded has nothing to wait for
            self._stream.wait_event(event._event)

    def wait_stream(self, stream: "Stream") -> None:
        """Work queued on this stream from now on starts after the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one if None) at this point of the stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        return self.cuda_stream == other.cuda_stream and self.device == other.device

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device))

    def __repr__(self) -> str:
        return f"<minitensor.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event, like ``torch.cuda.Event``: a point in a stream to wait for, or to time from.

    The CuPy event is created at the first ``record``, on the stream's device (an event belongs to one).
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        _cupy()  # the clear error now, not at the first record
        self.enable_timing, self.blocking, self.interprocess = enable_timing, blocking, interprocess
        self._event: Any = None

    @property
    def cuda_event(self) -> int:
        """The raw ``cudaEvent_t`` handle (0 before the first record)."""
        return 0 if self._event is None else self._event.ptr

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current point of ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        if self._event is None:
            cp = _cupy()
            with cp.cuda.Device(stream.device.index):
                self._event = cp.cuda.Event(block=self.blocking, disable_timing=not self.enable_timing,
                                            interprocess=self.interprocess)
        self._event.record(stream._stream)

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream`` (default: the current stream) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        """True when the work before the recorded point has finished (or nothing was recorded)."""
        return self._event is None or self._event.done

    def synchronize(self) -> None:
        """Wait on the host until the work before the recorded point has finished."""
        if self._event is not None:
            self._event.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds of GPU time from this event to ``end_event``; waits for ``end_event`` first. Both
        need ``enable_timing=True`` and a ``record``."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time needs both events created with enable_timing=True")
        if self._event is None or end_event._event is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        end_event._event.synchronize()
        return float(_cupy().cuda.get_elapsed_time(self._event, end_event._event))

    def __repr__(self) -> str:
        return f"<minitensor.cuda.Event {self.cuda_event:#x}>"


def current_stream(device: DeviceLike = None) -> Stream:
    """The stream minitensor's ops on ``device`` queue their work on in this thread (CuPy's current one)."""
    cp = _cupy()
    index = _device_index(device)
    return Stream._of(cp.cuda.get_current_stream(index), index)


def default_stream(device: DeviceLike = None) -> Stream:
    """The default stream of ``device``: the legacy null stream, or the per-thread default stream when CuPy
    runs with ``CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1``."""
    cp = _cupy()
    index = _device_index(device)
    from cupy_backends.cuda import stream as backend_stream
    per_thread = backend_stream.get_default_stream_ptr() == cp.cuda.runtime.streamPerThread
    return Stream._of(cp.cuda.Stream.ptds if per_thread else cp.cuda.Stream.null, index)


@contextlib.contextmanager
def stream(stream: Stream | None) -> Iterator[Stream | None]:
    """Inside the block, ``stream`` is the current stream and its device the current device: minitensor's
    ops queue their kernels there. ``None`` changes nothing, as in PyTorch."""
    if stream is None:
        yield None
        return
    cp = _cupy()
    with cp.cuda.Device(stream.device.index), stream._stream:
        yield stream


# ------------------------------------------------------------------------------------- pinned host memory
def _pinned_copy(array: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of host ``array`` in page-locked memory (CuPy's pinned pool, which takes the
    block back when the copy is garbage collected)."""
    _cupy()
    import cupyx
    out = cupyx.empty_pinned(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def _is_pinned(array: np.ndarray) -> bool:
    """Whether host ``array`` lives in page-locked memory (the driver's answer; False without CUDA)."""
    if not is_available() or array.size == 0:
        return False
    from cupy.cuda import pinned_memory
    return bool(pinned_memory.is_memory_pinned(array.ctypes.data))
