"""``DataLoader``: batches from a dataset, optionally loaded ahead by background threads.

Loading runs in the main thread with ``num_workers=0`` (the default). With ``num_workers=k > 0``, k
threads load batches ahead of the consumer: up to ``k * prefetch_factor`` batches are in flight at once,
batch j is loaded by worker j % k, and they come back in sampler order. Threads, not processes: NumPy
releases the GIL while it copies and indexes arrays, which is most of a batch's cost here, and threads need
no pickling. Each worker is seeded as PyTorch seeds its processes (``_worker.py``). An exception raised
while loading a batch is re-raised in the consumer's thread with its original traceback; dropping the
iterator, exhausting it, an exception or the interpreter's exit stops the threads without waiting for
queued batches.

``pin_memory=True`` (PyTorch's option) puts every tensor of each batch in page-locked host memory, in the
loading thread, when CUDA is available; without CUDA it warns and does nothing, as PyTorch does.

``device=`` (a minitensor extension) delivers the batches on that device. On a CUDA device each batch is
copied one step ahead on a side stream while the consumer's step runs (``backends/cuda/prefetch.py``); from pinned
memory the copies do not block the host. ``device="cpu"`` changes nothing.

Over an ``IterableDataset`` there is no sampler: each batch is the next ``batch_size`` samples of the
stream (``iterable.py``); with workers, each thread iterates its own ``iter(dataset)``, batches are asked
of the live workers in turn and a worker whose stream has ended is skipped from then on (PyTorch's order).
``batch_size=None`` turns automatic batching off: each sample (or ``dataset[i]``) goes through
``collate_fn``, by default ``default_convert``.
"""
from __future__ import annotations

import collections
import itertools
import math
import warnings
import concurrent.futures
from concurrent.futures import Future
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

import numpy as np

from ... import cuda
from ...device import as_device, device as Device
from ...tensor import Tensor
from ...creation import randint
from ...profiler.profile import record_function
from ._rng import GeneratorLike, resolve_generator
from ._worker import Workers, get_worker_info
from .collate import default_collate, default_convert
from .dataset import BatchFetcher, Dataset, Subset
from .iterable import IterableDataset, StreamFetcher, _InfiniteConstantSampler
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches of ``batch_size`` samples merged by ``collate_fn``.

    ``shuffle=True`` draws a new order each epoch from ``generator`` (None: minitensor's global CPU
    generator, so ``manual_seed`` reproduces it; an int seed; or a ``np.random.Generator``). ``sampler``
    (indices) and ``batch_sampler`` (lists of indices) replace the built-in ones, with PyTorch's rules on
    which options may be combined. When ``collate_fn`` is the default and the dataset (or the dataset at
    the bottom of a chain of ``Subset``) offers ``batch_fetcher()`` - ``TensorDataset``, the image
    datasets without transforms - each batch is one fancy index per stored array.

    ``num_workers``: how many threads load batches ahead (0: load in the calling thread), with
    ``prefetch_factor`` batches in flight per thread; each iterator draws a base seed from ``generator``
    (None: the global generator) and worker i's generators are seeded with base seed + i before
    ``worker_init_fn(i)`` runs in it (``get_worker_info()`` and ``initial_seed()`` say so inside).
    ``pin_memory``: batches in pinned host memory (needs CUDA); ``device``: where the batches are
    delivered (see the module docstring).

    An ``IterableDataset`` takes no ``shuffle``, ``sampler`` or ``batch_sampler`` (PyTorch's ValueErrors);
    its loader has a ``len()`` when the dataset has one: ``ceil(len / batch_size)`` (floor with
    ``drop_last``). ``batch_size=None``: no batching, ``collate_fn`` (default ``default_convert``) per sample.
    """

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | None = None, batch_sampler: Sampler[Sequence[int]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[Any], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], Any] | None = None, multiprocessing_context: Any = None,
                 generator: GeneratorLike = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True,
                 device: str | Device | None = None) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers "
                             "> 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        prefetch_factor = 2 if prefetch_factor is None else prefetch_factor
        if not isinstance(prefetch_factor, int) or prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            _check_context(multiprocessing_context, num_workers)
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:  # the stream is the order: PyTorch's checks, the dataset's first
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but "
                                 f"got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but "
                                 f"got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler "
                                 f"option, but got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        seed_source = resolve_generator(generator)  # one generator for the order and the workers' seeds
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=seed_source) if shuffle else SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type] # of None for a stream
        self._auto_collation = batch_sampler is not None
        self._len_called: int | None = None  # what len() said of an IterableDataset, to warn when it was wrong
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.timeout = timeout  # seconds to wait for a worker's batch; 0: no limit
        self.prefetch_factor = prefetch_factor
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn: Callable[[Any], Any] = collate_fn
        self.pin_memory = pin_memory
        self.generator = generator
        self._seed_source = seed_source
        self.worker_init_fn = worker_init_fn
        self.device = None if device is None else as_device(device)
        # threads, not processes (docs/differences.md): the context is kept for reading back only
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        self._persistent_pool: Workers | None = None  # with persistent_workers: the threads every pass reuses

    def __del__(self) -> None:
        pool = getattr(self, "_persistent_pool", None)  # (absent when __init__ raised)
        if pool is not None:
            pool.stop()

    @property
    def _index_sampler(self) -> Any:
        """What the iterator draws its tasks from: lists of indices when batching, else single indices."""
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if not self._iterable:
            return len(self._index_sampler)
        n = self._len_called = len(self.dataset)  # type: ignore[arg-type] # TypeError when it has none, as PyTorch
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Any:
        pin = self.pin_memory and cuda.is_available()
        if self.pin_memory and not pin:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device "
                          "pinned memory won't be used.", stacklevel=2)
        if self.timeout > 0 and self.num_workers == 0:  # as PyTorch: nothing to time out without workers
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        to_gpu = self.device is not None and self.device.type == "cuda"
        if to_gpu:
            self.device.backend  # type: ignore[union-attr] # raises the device's own "why unavailable" error before any loading
        load = self._batch_loader(pin)
        workers = self._persistent_pool
        if workers is None:
            # PyTorch draws the base seed for every iterator (once with persistent workers, whose threads,
            # seeds and worker_init_fn calls serve every pass), before the sampler draws its order
            source = self._seed_source
            base_seed = int(randint(0, 2**62, ()).item()) if source is None else int(source.integers(0, 2**62))
            workers = Workers(load, self.num_workers, base_seed, self.worker_init_fn, self.dataset) \
                if self.num_workers > 0 else None
            if self.persistent_workers:
                self._persistent_pool = workers
        else:
            workers.load = load  # this pass's streams (an IterableDataset is iterated anew each pass)
        batches = _DataLoaderIter(iter(self._index_sampler), load, workers,
                                  self.num_workers * self.prefetch_factor, self.__len__, self.timeout,
                                  self._len_called if self._iterable else None, owns_pool=not self.persistent_workers)
        if not to_gpu:
            return batches
        from ...backends.cuda.prefetch import CudaPrefetcher  # CuPy's streams: only for a CUDA device
        return CudaPrefetcher(batches, self.device)  # type: ignore[arg-type]

    def _batch_loader(self, pin: bool) -> Callable[[Any], Any]:
        """The function that turns one task (a list of indices, one index, or for a stream the batch's
        placeholder list or None) into a batch on the host (collated, maybe pinned)."""
        dataset, collate = self.dataset, self.collate_fn
        if self._iterable:  # one stream per loading thread, made by the thread that uses it
            streams = [StreamFetcher(dataset, collate, self.drop_last)  # type: ignore[arg-type]
                       for _ in range(max(1, self.num_workers))]
            get = (lambda task: streams[0](task)) if self.num_workers == 0 else \
                (lambda task: streams[get_worker_info().id](task))  # type: ignore[union-attr]
        elif not self._auto_collation:
            get = lambda index: collate(dataset[index])  # noqa: E731
        else:
            fetch = _fast_batch_fetcher(dataset) if collate is default_collate else None
            get = (lambda indices: fetch(np.asarray(indices, dtype=np.int64))) if fetch is not None else \
                (lambda indices: collate([dataset[i] for i in indices]))

        def load(task: Any) -> Any:
            batch = get(task)
            return _map_tensors(batch, Tensor.pin_memory) if pin else batch
        return load


def _check_context(context: Any, num_workers: int) -> None:
    """PyTorch's checks of ``multiprocessing_context`` (a start method name or a context object)."""
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > "
                         f"0), but got num_workers={num_workers}")
    if isinstance(context, str):
        import multiprocessing
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start method in "
                             f"{methods!r}, but got multiprocessing_context={context!r}")
    elif not hasattr(context, "get_start_method"):
        raise TypeError("multiprocessing_context option should be a valid context object or a string "
                        f"specifying the start method, but got multiprocessing_context={context}")


_NEXT = "enumerate(DataLoader)#_DataLoaderIter.__next__"  # PyTorch's range name, with our iterator's


class _DataLoaderIter:
    """One pass over a DataLoader: loads in the caller's thread, or ahead in worker threads.

    A load that returns ``StreamFetcher.ENDED`` (an IterableDataset's stream is exhausted) ends the pass
    without workers, and with workers retires that worker: its pending tasks are skipped, no more go to it.
    """

    def __init__(self, batches: Iterator[Any], load: Callable[[Any], Any], workers: Workers | None,
                 depth: int, length: Callable[[], int], timeout: float = 0,
                 reported_len: int | None = None, owns_pool: bool = True) -> None:
        self._owns_pool = owns_pool  # False for a loader's persistent workers: the pass leaves them running
        self._batches: Iterator[Any] | None = batches
        self._load = load
        self._length = length
        self._depth = depth
        self._timeout = timeout or None
        self._pending: collections.deque[tuple[Any, int, Future]] = collections.deque()
        self._pool = workers
        self._turn = itertools.cycle(range(workers.num_workers)) if workers is not None else None
        self._live = set(range(workers.num_workers)) if workers is not None else set()
        self._reported_len = reported_len
        self._yielded = 0

    def __iter__(self) -> "_DataLoaderIter":
        return self

    def __len__(self) -> int:
        return self._length()

    def __next__(self) -> Any:
        with record_function(_NEXT):  # the data time of a profiled step
            batch = self._next()
        self._yielded += 1
        if self._reported_len is not None and self._yielded > self._reported_len:
            warnings.warn(f"Length of IterableDataset was reported to be {self._reported_len} (when accessing "
                          f"len(dataloader)), but {self._yielded} samples have been fetched.", stacklevel=2)
        return batch

    def _next(self) -> Any:
        try:
            if self._pool is None:
                if self._batches is None:
                    raise StopIteration
                batch = self._load(next(self._batches))
                if batch is _ENDED:
                    raise StopIteration
                return batch
            while True:
                self._submit_ahead()
                if not self._pending:
                    raise StopIteration
                task, worker, future = self._pending.popleft()
                if worker not in self._live:  # its stream ended: what it was given after is void
                    future.cancel()
                    continue
                self._submit_ahead()  # keep `depth` batches loading while this one is awaited
                batch = _result_of(future, task, self._timeout)
                if batch is not _ENDED:
                    return batch
                self._live.discard(worker)
        except BaseException:
            self.close()
            raise

    def _submit_ahead(self) -> None:
        while self._batches is not None and len(self._pending) < self._depth:
            task = next(self._batches, _ENDED)
            if task is _ENDED or not self._live:
                self._batches = None
                break
            worker = next(w for w in self._turn if w in self._live)  # type: ignore[union-attr]
            self._pending.append((task, worker, self._pool.submit(worker, task)))  # type: ignore[union-attr]

    def close(self) -> None:
        """Stop loading: queued batches are cancelled and the threads end after their current batch (waited
        for a bounded time)."""
        self._batches = None
        for _, _, future in self._pending:
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            pool, self._pool = self._pool, None
            if self._owns_pool:
                pool.stop()

    def __del__(self) -> None:
        self.close()


_ENDED = StreamFetcher.ENDED


def _result_of(future: Future, task: Any, timeout: float | None = None) -> Any:
    """The batch, or the loader thread's exception (original traceback, plus a note saying where); PyTorch's
    RuntimeError when it takes longer than ``timeout`` seconds."""
    try:
        error = future.exception(timeout)
    except concurrent.futures.TimeoutError:
        raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None
    if error is None:
        return future.result()
    if hasattr(error, "add_note"):
        if isinstance(task, list) and task and task[0] is not None:
            shown = list(task[:8]) + (["..."] if len(task) > 8 else [])
            error.add_note(f"(raised in a DataLoader loading thread, for the batch of indices {shown})")
        else:
            where = "" if task is None or isinstance(task, list) else f", for index {task}"
            error.add_note(f"(raised in a DataLoader loading thread{where})")
    raise error


def _fast_batch_fetcher(dataset: Any) -> BatchFetcher | None:
    """The dataset's batch fetcher, reached through any chain of Subsets (their indices composed)."""
    index_map: np.ndarray | None = None  # outermost positions -> positions in `dataset`
    while isinstance(dataset, Subset):
        level = np.asarray(dataset.indices, dtype=np.int64)
        index_map = level if index_map is None else level[index_map]
        dataset = dataset.dataset
    make_fetcher = getattr(dataset, "batch_fetcher", None)
    fetch = make_fetcher() if callable(make_fetcher) else None
    if fetch is None or index_map is None:
        return fetch
    to_base = index_map
    return lambda indices: fetch(to_base[indices])


def _map_tensors(batch: Any, fn: Callable[[Tensor], Any]) -> Any:
    """``batch`` with ``fn`` applied to every Tensor inside (nested in lists, tuples, named tuples, dicts)."""
    if isinstance(batch, Tensor):
        return fn(batch)
    if isinstance(batch, dict):
        return type(batch)((k, _map_tensors(v, fn)) for k, v in batch.items())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(_map_tensors(v, fn) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_map_tensors(v, fn) for v in batch)
    return batch
