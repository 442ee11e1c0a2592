"""Iterable-style datasets: ``IterableDataset`` (a stream of samples) and ``ChainDataset`` (streams in turn).

A DataLoader over an ``IterableDataset`` has no sampler: it draws ``batch_size`` samples at a time from
``iter(dataset)`` (PyTorch's ``_InfiniteConstantSampler`` stands in for the indices). With ``num_workers=k``
each worker thread calls ``iter(dataset)`` itself, so the dataset shards its stream with
``get_worker_info()`` (``id``, ``num_workers``) or every worker yields the whole stream, as in PyTorch.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator, TypeVar

from .dataset import Dataset
from .sampler import Sampler

T_co = TypeVar("T_co", covariant=True)


class IterableDataset(Dataset[T_co]):
    """A stream of samples: subclasses define ``__iter__`` (and may define ``__len__``).

    ``a + b`` chains two streams (a ``ChainDataset``).
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} (an IterableDataset subclass) must implement __iter__")

    def __add__(self, other: Dataset[T_co]) -> "ChainDataset":  # type: ignore[override]
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """The samples of each IterableDataset in ``datasets``, one stream after the other (chained lazily)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class _InfiniteConstantSampler(Sampler[None]):
    """``None`` forever: the DataLoader's sampler for an IterableDataset (the stream decides where it ends)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class StreamFetcher:
    """One iterator over an IterableDataset: each call takes the next sample (``task`` None) or the next
    ``len(task)`` samples, merged by ``collate``; ``ENDED`` once the stream is exhausted (and after).

    A short last batch is kept unless ``drop_last``. ``iter(dataset)`` is called on the first call, so in
    a worker thread it runs after ``worker_init_fn`` and sees ``get_worker_info()``.
    """

    ENDED = object()

    def __init__(self, dataset: Iterable, collate: Any, drop_last: bool) -> None:
        self._dataset = dataset
        self._collate = collate
        self._drop_last = drop_last
        self._it: Iterator | None = None
        self._ended = False

    def __call__(self, task: list | None) -> Any:
        if self._ended:
            return self.ENDED
        if self._it is None:
            self._it = iter(self._dataset)
        if task is None:
            try:
                return self._collate(next(self._it))
            except StopIteration:
                self._ended = True
                return self.ENDED
        samples = []
        for _ in task:  # at most one batch: the stream's own Python steps, nothing per element of an array
            try:
                samples.append(next(self._it))
            except StopIteration:
                self._ended = True
                break
        if not samples or (self._drop_last and len(samples) < len(task)):
            return self.ENDED
        return self._collate(samples)
