"""CUDA streams and events with ``torch.cuda``'s API, on CuPy (``minitensor.cuda`` re-exports them).

Streams: minitensor's CUDA ops queue their kernels on CuPy's current stream (one per thread and device), so
``with minitensor.cuda.stream(s):`` runs them on ``s``. Streams made here are non-blocking, as PyTorch's are:
they do not wait for the legacy default stream, so order work across streams with events
(``Stream.wait_event``, ``Stream.wait_stream``).
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from ...device import device as _device
from .runtime import DeviceLike, _device_index, cupy_module


class Stream:
    """A CUDA stream on one device, like ``torch.cuda.Stream``: a ``cupy.cuda.Stream`` created non-blocking.

    ``priority``: lower numbers run first where the hardware supports it (0 is the default).
    """

    def __init__(self, device: DeviceLike = None, priority: int = 0) -> None:
        cp = cupy_module()
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
        cupy_module()  # the clear error now, not at the first record
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
            cp = cupy_module()
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
        return float(cupy_module().cuda.get_elapsed_time(self._event, end_event._event))

    def __repr__(self) -> str:
        return f"<minitensor.cuda.Event {self.cuda_event:#x}>"


def current_stream(device: DeviceLike = None) -> Stream:
    """The stream minitensor's ops on ``device`` queue their work on in this thread (CuPy's current one)."""
    cp = cupy_module()
    index = _device_index(device)
    return Stream._of(cp.cuda.get_current_stream(index), index)


def default_stream(device: DeviceLike = None) -> Stream:
    """The default stream of ``device``: the legacy null stream, or the per-thread default stream when CuPy
    runs with ``CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1``."""
    cp = cupy_module()
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
    cp = cupy_module()
    with cp.cuda.Device(stream.device.index), stream._stream:
        yield stream


