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
"""
from __future__ import annotations

import collections
import itertools
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
from ._worker import Workers
from .collate import default_collate
from .dataset import BatchFetcher, Dataset, Subset
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
    """

    def __init__(self, dataset: Dataset[T_co], batch_size: int = 1, shuffle: bool = False,
                 sampler: Sampler | None = None, batch_sampler: Sampler[Sequence[int]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, generator: GeneratorLike = None,
                 worker_init_fn: Callable[[int], Any] | None = None, prefetch_factor: int = 2,
                 device: str | Device | None = None, timeout: float = 0) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers option should be a non-negative integer, got {num_workers!r}")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if not isinstance(prefetch_factor, int) or prefetch_factor < 1:
            raise ValueError(f"prefetch_factor option should be a positive integer, got {prefetch_factor!r}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
        elif batch_size is None:
            raise ValueError("batch_size=None (no automatic batching) is not supported; use batch_size=1 "
                             "or a batch_sampler")
        seed_source = resolve_generator(generator)  # one generator for the order and the workers' seeds
        if sampler is None:
            sampler = RandomSampler(dataset, generator=seed_source) if shuffle else SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
            batch_size_seen: int | None = batch_size
        else:
            batch_size_seen, drop_last = None, False
        self.dataset = dataset
        self.batch_size = batch_size_seen
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.timeout = timeout  # seconds to wait for a worker's batch; 0: no limit
        self.prefetch_factor = prefetch_factor
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.pin_memory = pin_memory
        self.generator = generator
        self._seed_source = seed_source
        self.worker_init_fn = worker_init_fn
        self.device = None if device is None else as_device(device)

    def __len__(self) -> int:
        return len(self.batch_sampler)  # type: ignore[arg-type]

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
        # PyTorch draws the base seed for every iterator, before the sampler draws its order
        source = self._seed_source
        base_seed = int(randint(0, 2**62, ()).item()) if source is None else int(source.integers(0, 2**62))
        load = self._batch_loader(pin)
        workers = Workers(load, self.num_workers, base_seed, self.worker_init_fn, self.dataset) \
            if self.num_workers > 0 else None
        batches = _DataLoaderIter(iter(self.batch_sampler), load, workers,
                                  self.num_workers * self.prefetch_factor, len(self), self.timeout)
        if not to_gpu:
            return batches
        from ...backends.cuda.prefetch import CudaPrefetcher  # CuPy's streams: only for a CUDA device
        return CudaPrefetcher(batches, self.device)  # type: ignore[arg-type]

    def _batch_loader(self, pin: bool) -> Callable[[Sequence[int]], Any]:
        """The function that turns one list of indices into a batch on the host (collated, maybe pinned)."""
        fetch = _fast_batch_fetcher(self.dataset) if self.collate_fn is default_collate else None
        dataset, collate = self.dataset, self.collate_fn

        def load(indices: Sequence[int]) -> Any:
            if fetch is not None:
                batch = fetch(np.asarray(indices, dtype=np.int64))
            else:
                batch = collate([dataset[i] for i in indices])
            return _map_tensors(batch, Tensor.pin_memory) if pin else batch
        return load


_NEXT = "enumerate(DataLoader)#_DataLoaderIter.__next__"  # PyTorch's range name, with our iterator's


class _DataLoaderIter:
    """One pass over a DataLoader: loads in the caller's thread, or ahead in worker threads."""

    def __init__(self, batches: Iterator[Sequence[int]], load: Callable[[Sequence[int]], Any],
                 workers: Workers | None, depth: int, length: int, timeout: float = 0) -> None:
        self._batches: Iterator[Sequence[int]] | None = batches
        self._load = load
        self._length = length
        self._depth = depth
        self._timeout = timeout or None
        self._pending: collections.deque[tuple[Sequence[int], Future]] = collections.deque()
        self._pool = workers
        self._turn = itertools.cycle(range(workers.num_workers)) if workers is not None else None

    def __iter__(self) -> "_DataLoaderIter":
        return self

    def __len__(self) -> int:
        return self._length

    def __next__(self) -> Any:
        with record_function(_NEXT):  # the data time of a profiled step
            return self._next()

    def _next(self) -> Any:
        try:
            if self._pool is None:
                if self._batches is None:
                    raise StopIteration
                return self._load(next(self._batches))
            self._submit_ahead()
            if not self._pending:
                raise StopIteration
            indices, future = self._pending.popleft()
            self._submit_ahead()  # keep `depth` batches loading while this one is awaited
            return _result_of(future, indices, self._timeout)
        except BaseException:
            self.close()
            raise

    def _submit_ahead(self) -> None:
        while self._batches is not None and len(self._pending) < self._depth:
            indices = next(self._batches, None)
            if indices is None:
                self._batches = None
                break
            worker = next(self._turn)  # type: ignore[arg-type]
            self._pending.append((indices, self._pool.submit(worker, indices)))  # type: ignore[union-attr]

    def close(self) -> None:
        """Stop loading: queued batches are cancelled and the threads end after their current batch (waited
        for a bounded time)."""
        self._batches = None
        for _, future in self._pending:
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.stop()

    def __del__(self) -> None:
        self.close()


def _result_of(future: Future, indices: Sequence[int], timeout: float | None = None) -> Any:
    """The batch, or the loader thread's exception (original traceback, plus a note saying where); PyTorch's
    RuntimeError when it takes longer than ``timeout`` seconds."""
    try:
        error = future.exception(timeout)
    except concurrent.futures.TimeoutError:
        raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None
    if error is None:
        return future.result()
    if hasattr(error, "add_note"):
        shown = list(indices[:8]) + (["..."] if len(indices) > 8 else [])
        error.add_note(f"(raised in a DataLoader loading thread, for the batch of indices {shown})")
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
