"""Samplers: iterables of dataset indices (``SequentialSampler``, ``RandomSampler``,
``WeightedRandomSampler``), and ``BatchSampler``, which groups them into lists of batch indices.

Sequential and random samplers also give an epoch's order as int64 arrays of bounded size (``index_chunks``:
at most ``CHUNK`` draws, or one permutation of the data, at a time), so ``BatchSampler`` cuts batches with
slices instead of one Python step per sample, and ``RandomSampler(replacement=True, num_samples=10**10)``
costs no memory proportional to ``num_samples`` (PyTorch draws as iteration goes too).
"""
from __future__ import annotations

from typing import Any, Generic, Iterable, Iterator, Sequence, Sized, TypeVar

import numpy as np

from ...creation import as_tensor, multinomial
from ...dtypes import float64
from ._rng import GeneratorLike, active_generator, resolve_generator

T_co = TypeVar("T_co", covariant=True)
CHUNK = 1 << 16  # indices drawn at a time with replacement: 512 KiB; a seeded stream gives the same sequence


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (indices or batches of them) and usually ``__len__``."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} (a Sampler subclass) must implement __iter__")


class _ArraySampler(Sampler[int]):
    """A sampler whose epoch is a run of int64 arrays: iterating yields their elements as Python ints."""

    def index_chunks(self) -> Iterator[np.ndarray]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[int]:
        for chunk in self.index_chunks():
            yield from chunk.tolist()


def _draws(count: int, draw: Any) -> Iterator[np.ndarray]:
    """``count`` values as arrays of at most ``CHUNK``, each from ``draw(size)``."""
    for start in range(0, count, CHUNK):
        yield draw(min(CHUNK, count - start))


class SequentialSampler(_ArraySampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def index_chunks(self) -> Iterator[np.ndarray]:
        yield np.arange(len(self.data_source), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(_ArraySampler):
    """A random order of the indices: a permutation per pass over the data (``replacement=False``; with
    ``num_samples > n``, whole permutations one after another, the last one cut), or ``num_samples``
    independent uniform draws (``replacement=True``). A new order every epoch; see ``_rng`` for the
    accepted ``generator`` values."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: GeneratorLike = None) -> None:
        self.data_source = data_source
        self.replacement = bool(replacement)
        self._num_samples = num_samples
        self.generator = generator
        self._rng = resolve_generator(generator)
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, got num_samples={num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def index_chunks(self) -> Iterator[np.ndarray]:
        n, rng = len(self.data_source), active_generator(self._rng)
        if self.replacement:
            yield from _draws(self.num_samples, lambda size: rng.integers(0, n, size=size, dtype=np.int64))
            return
        for start in range(0, self.num_samples, n):
            yield rng.permutation(n)[:self.num_samples - start].astype(np.int64, copy=False)

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(_ArraySampler):
    """``num_samples`` indices of ``range(len(weights))``, each drawn with probability proportional to its
    weight (``replacement=False``: distinct indices, so at most as many as the positive weights): one
    ``multinomial`` draw per epoch, from ``generator`` (a ``minitensor.Generator``) or the global one."""

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True, generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if weights_tensor.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def index_chunks(self) -> Iterator[np.ndarray]:
        if not self.replacement:  # distinct indices: at most len(weights) of them, one draw
            yield multinomial(self.weights, self.num_samples, False, generator=self.generator).numpy()
            return
        yield from _draws(self.num_samples,
                          lambda size: multinomial(self.weights, size, True, generator=self.generator).numpy())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The elements of ``indices`` in a random order, a new one every epoch (``generator`` as ``RandomSampler``'s)."""

    def __init__(self, indices: Sequence[int], generator: GeneratorLike = None) -> None:
        self.indices = indices
        self.generator = generator
        self._rng = resolve_generator(generator)

    def __iter__(self) -> Iterator[int]:
        for i in active_generator(self._rng).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[list[int]]):
    """Lists of ``batch_size`` indices from ``sampler``; the last, shorter one is dropped with ``drop_last``."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        if isinstance(self.sampler, _ArraySampler):
            return self._slices(self.sampler.index_chunks())
        return self._groups(iter(self.sampler))

    def _slices(self, chunks: Iterator[np.ndarray]) -> Iterator[list[int]]:
        """Whole batches cut from each chunk; a chunk's tail waits for the next one."""
        rest = np.empty(0, dtype=np.int64)
        for chunk in chunks:
            order = np.concatenate([rest, chunk]) if len(rest) else chunk
            whole = len(order) - len(order) % self.batch_size
            for start in range(0, whole, self.batch_size):
                yield order[start:start + self.batch_size].tolist()
            rest = order[whole:]
        if len(rest) and not self.drop_last:
            yield rest.tolist()

    def _groups(self, indices: Iterator[Any]) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in indices:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
