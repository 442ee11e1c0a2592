"""Map-style datasets: ``Dataset``, ``TensorDataset``, ``StackDataset``, ``Subset``, ``ConcatDataset`` and
``random_split`` (the iterable-style ones are in ``iterable.py``).

A dataset may also offer ``batch_fetcher()``: a function from an int64 index array (B,) to exactly
what ``default_collate([self[i] for i in indices])`` would give, or None when it cannot right now (for
example when a transform is set). The DataLoader uses it, through any chain of Subsets, when its
collate function is the default, so a batch costs one fancy index per stored array instead of B calls
to ``__getitem__`` and a stack.
"""
from __future__ import annotations

import bisect
import math
import warnings
from itertools import accumulate
from typing import Any, Callable, Generic, Iterable, Sequence, TypeVar

import numpy as np

from ...tensor import Tensor
from ...creation import from_numpy
from ._rng import GeneratorLike, active_generator, resolve_generator

T_co = TypeVar("T_co", covariant=True)
BatchFetcher = Callable[[np.ndarray], Any]


class Dataset(Generic[T_co]):
    """A map from indices to samples: subclasses define ``__getitem__`` (and ``__len__`` for samplers).

    ``a + b`` concatenates two datasets (a ``ConcatDataset``).
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} (a Dataset subclass) must implement __getitem__")

    def __add__(self, other: "Dataset[T_co]") -> "ConcatDataset[T_co]":
        return ConcatDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples ``(t0[i], t1[i], ...)`` from tensors sharing their first dimension N.

    Its ``batch_fetcher`` indexes every tensor once with the whole batch: ``[t[indices] for t in tensors]``.
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for k, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset takes Tensors; argument {k} is a {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset tensors need a first (sample) dimension; argument {k} is 0-d")
        sizes = [t.shape[0] for t in tensors]
        if any(n != sizes[0] for n in sizes):
            raise ValueError(f"Size mismatch between tensors: first dimensions {sizes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def batch_fetcher(self) -> BatchFetcher:
        return self._take

    def _take(self, indices: np.ndarray) -> list[Tensor]:
        index = from_numpy(indices)
        return [t[index if t.device == index.device else index.to(t.device)] for t in self.tensors]


class StackDataset(Dataset[Any]):
    """Sample i of several same-length datasets together: ``StackDataset(a, b)[i] == (a[i], b[i])``,
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        parts = list(args or kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets: tuple | dict = args or kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class Subset(Dataset[T_co]):
    """``dataset`` seen through ``indices``: ``subset[i] == dataset[indices[i]]``."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """Datasets one after the other; index i falls in the first dataset whose cumulative size exceeds i."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        from .iterable import IterableDataset  # iterable.py builds on this module
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T_co:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for a ConcatDataset of length {n}")
        if index < 0:
            index += n
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: GeneratorLike = None) -> list[Subset[T_co]]:
    """Split ``dataset`` into non-overlapping random Subsets of the given lengths.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1: then each part gets
    ``floor(n * fraction)`` and the remainder is dealt one by one, round-robin from the first part, as
    PyTorch does. ``generator``: None (minitensor's global generator), an int seed or a NumPy Generator.
    """
    n = len(dataset)  # type: ignore[arg-type]
    counts = _split_counts(list(lengths), n)
    order = active_generator(resolve_generator(generator)).permutation(n).tolist()
    ends = list(accumulate(counts))
    return [Subset(dataset, order[end - count:end]) for count, end in zip(counts, ends)]


def _split_counts(lengths: list[int | float], n: int) -> list[int]:
    """Integer part sizes from counts or from fractions of ``n``."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"fractions in random_split must lie in [0, 1], got {lengths}")
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"length of split at index {i} is 0; this split will be empty", stacklevel=3)
        return counts
    if any(isinstance(c, float) and not c.is_integer() for c in lengths) or any(c < 0 for c in lengths):
        raise ValueError(f"random_split lengths must be non-negative counts or fractions summing to 1, "
                         f"got {lengths}")
    counts = [int(c) for c in lengths]
    if sum(counts) != n:
        raise ValueError(f"Sum of input lengths ({sum(counts)}) does not equal the length of the input "
                         f"dataset ({n})")
    return counts
