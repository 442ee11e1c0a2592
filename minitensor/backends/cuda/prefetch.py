"""The DataLoader's CUDA side (``DataLoader(..., device="cuda")``): host batches copied to the GPU one step
ahead on a side stream, with CuPy's streams and events."""
from __future__ import annotations

import collections
import sys
from typing import Any

from ...device import device as Device
from ...device import cpu
from ...tensor import Tensor, _wrap
from ...utils.data.dataloader import _DataLoaderIter, _map_tensors
from . import runtime


class CudaPrefetcher:
    """Host batches delivered on a CUDA device, each copied one step ahead on a side stream.

    Each ``next`` hands out the batch whose copy the previous call queued, after making the consumer's
    current stream wait for that copy (an event: no host sync), then queues the copy of the following batch,
    which runs on the side stream while the consumer's step runs. The side stream is non-blocking, so the
    copies also overlap work on the legacy default stream.

    Memory. The device arrays are allocated from the consumer's stream, because CuPy's pool keeps one arena
    per stream and a block returns to the arena it came from: allocated on the side stream, a batch the
    consumer frees could be reused by the next copy while the consumer's kernels still read it. A block of
    the consumer's arena may in turn still be read by work the consumer queued before it was freed, so each
    copy first waits for the work queued on the consumer's stream when the copy is queued (the previous
    step, not the current one). Host arrays that are not pinned are staged in pinned memory first (with
    ``pin_memory=True`` the loading threads already did it), so that the copy does not block the host, and
    each pinned array is kept until its copy has finished.

    A loading error is raised at the call that would have returned that batch, after the batches before it.
    """

    def __init__(self, batches: _DataLoaderIter, dev: Device) -> None:
        import cupy
        self._cupy, self._batches, self._dev = cupy, batches, dev
        self._next: Any = None  # (the batch on the device, the event its copy records), or None at the end
        self._error: BaseException | None = None  # the loading error that follows the batches handed out
        self._in_flight: collections.deque[tuple[Any, list]] = collections.deque()  # (copy done, host arrays)
        with cupy.cuda.Device(dev.index):
            self._side = cupy.cuda.Stream(non_blocking=True)
            self._queue_next(cupy.cuda.get_current_stream())

    def __iter__(self) -> "CudaPrefetcher":
        return self

    def __len__(self) -> int:
        return len(self._batches)

    def __next__(self) -> Any:
        try:
            with self._cupy.cuda.Device(self._dev.index):
                return self._hand_out(self._cupy.cuda.get_current_stream())
        except BaseException:
            self.close()
            raise

    def _hand_out(self, consumer: Any) -> Any:
        """The queued batch, ordered before the consumer's next work; queue the one after it."""
        self._release_copied()
        if self._next is None:
            error, self._error = self._error, None
            raise StopIteration if error is None else error
        batch, copied = self._next
        consumer.wait_event(copied)
        self._queue_next(consumer)
        return batch

    def _queue_next(self, consumer: Any) -> None:
        """Queue the copy of the next host batch; remember a loading error for the next call."""
        self._next = None
        try:
            host = next(self._batches)
        except StopIteration:
            return
        except Exception as e:
            self._error = e
            return
        cp, side, kept = self._cupy, self._side, []
        ready = cp.cuda.Event(disable_timing=True)
        ready.record(consumer)
        side.wait_event(ready)  # the consumer's earlier work may still read the blocks about to be written

        def copy(t: Tensor) -> Tensor:
            if t._device is not cpu or t.requires_grad:
                return t.to(self._dev)  # on a device already, or in a graph: the ordinary copy
            src = t.array
            if not (src.flags.c_contiguous and runtime.is_pinned(src)):
                src = runtime.pinned_copy(src)
            dst = cp.empty(src.shape, src.dtype)  # from the consumer's arena (its stream is current)
            dst.set(src, stream=side)
            kept.append(src)
            return _wrap(dst, self._dev)
        batch = _map_tensors(host, copy)
        copied = cp.cuda.Event(disable_timing=True)
        copied.record(side)
        self._in_flight.append((copied, kept))
        self._next = (batch, copied)

    def _release_copied(self) -> None:
        """Drop the host arrays of the copies that have finished (they finish in queue order)."""
        while self._in_flight and self._in_flight[0][0].done:
            self._in_flight.popleft()

    def close(self) -> None:
        """Stop loading; wait for copies still running (their pinned host arrays must outlive them)."""
        self._batches.close()
        self._next = None
        self._release_copied()
        if self._in_flight:
            self._side.synchronize()
            self._in_flight.clear()

    def __del__(self) -> None:
        if not sys.is_finalizing():  # at exit the CUDA context may already be gone
            self.close()
