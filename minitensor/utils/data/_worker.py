"""The DataLoader's loading threads: one per worker, seeded as PyTorch seeds its worker processes.

Each iterator draws a ``base_seed`` (from the loader's ``generator``, else minitensor's global generator);
worker ``i`` gets ``seed = base_seed + i``: its own minitensor generators on every device are seeded with
it (``mt.rand`` and friends in a worker draw from them, and ``mt.initial_seed()`` returns it), then
``worker_init_fn(i)`` runs in the thread. Batches go to the workers in turn (batch j to worker j % k), so a
worker's draws, and hence random augmentation, are the same on every run with the same seed.

Threads are daemons and stop when asked: closing or dropping the iterator, or the interpreter exiting,
cancels the queued batches and waits at most ``JOIN_TIMEOUT_S`` for the batches being loaded, so neither
slow items nor a dataset blocked on I/O can hold the program.
"""
from __future__ import annotations

import atexit
import queue
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from ...backends.generic.random import seed_thread

JOIN_TIMEOUT_S = 1.0


class _Local(threading.local):
    info: WorkerInfo | None = None  # set in worker threads


_LOCAL = _Local()


class WorkerInfo:
    """What ``get_worker_info()`` returns in a worker: ``id``, ``num_workers``, ``seed``, ``dataset``."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id: int, num_workers: int, seed: int, dataset: Any) -> None:
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self) -> str:
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "  # type: ignore[attr-defined]
                f"dataset={self.dataset!r:.60})")  # type: ignore[attr-defined]


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker thread, its ``WorkerInfo``; elsewhere None (as ``torch.utils.data``)."""
    return _LOCAL.info


class Workers:
    """``num_workers`` daemon threads, each loading the batches submitted to it, in order."""

    def __init__(self, load: Callable[[Any], Any], num_workers: int, base_seed: int,
                 worker_init_fn: Callable[[int], Any] | None, dataset: Any) -> None:
        self.num_workers = num_workers
        self.load = load  # what a task is turned into a batch with; a persistent pool gets each epoch's
        self._stop = threading.Event()
        self._queues: list[queue.SimpleQueue] = [queue.SimpleQueue() for _ in range(num_workers)]
        self._threads = [
            threading.Thread(target=_work, name=f"minitensor-DataLoader-{i}", daemon=True,
                             args=(self, self._queues[i], self._stop, worker_init_fn,
                                   WorkerInfo(i, num_workers, base_seed + i, dataset)))
            for i in range(num_workers)]
        for t in self._threads:
            t.start()
        _LIVE.add(self)

    def submit(self, worker: int, indices: Any) -> Future:
        """The batch of ``indices``, loaded by thread ``worker`` after those submitted to it before."""
        future: Future = Future()
        self._queues[worker].put((indices, future))
        return future

    def stop(self, timeout: float = JOIN_TIMEOUT_S) -> None:
        """Cancel what is queued; wait at most ``timeout`` in all for the batches being loaded."""
        self._signal()
        self._join(time.monotonic() + timeout)

    def _signal(self) -> None:
        self._stop.set()
        for q in self._queues:
            q.put(None)
        _LIVE.discard(self)

    def _join(self, end: float) -> None:
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(max(0.0, end - time.monotonic()))


def _work(pool: Workers, tasks: queue.SimpleQueue, stop: threading.Event,
          worker_init_fn: Callable[[int], Any] | None, info: WorkerInfo) -> None:
    """A worker thread: seed, run ``worker_init_fn``, then load batches until told to stop. An error in
    ``worker_init_fn`` is raised for each of this worker's batches, as PyTorch does."""
    _LOCAL.info = info
    seed_thread(info.seed)  # type: ignore[attr-defined]
    init_error: BaseException | None = None
    if worker_init_fn is not None:
        try:
            worker_init_fn(info.id)  # type: ignore[attr-defined]
        except BaseException as e:  # noqa: BLE001 - handed to the consumer with the batches
            init_error = e
            if hasattr(e, "add_note"):  # Python 3.11+
                e.add_note(f"(raised by worker_init_fn in DataLoader worker {info.id})")  # type: ignore[attr-defined]
    while True:
        task = tasks.get()
        if task is None or stop.is_set():
            return
        indices, future = task
        if not future.set_running_or_notify_cancel():
            continue
        if init_error is not None:
            future.set_exception(init_error)
            continue
        try:
            future.set_result(pool.load(indices))
        except BaseException as e:  # noqa: BLE001 - re-raised in the consumer's thread
            future.set_exception(e)


_LIVE: weakref.WeakSet[Workers] = weakref.WeakSet()


@atexit.register
def _stop_all_at_exit() -> None:
    """At interpreter exit, stop the workers of iterators still alive (daemon threads are not joined)."""
    alive = list(_LIVE)
    for workers in alive:
        workers._signal()
    end = time.monotonic() + JOIN_TIMEOUT_S
    for workers in alive:
        workers._join(end)
