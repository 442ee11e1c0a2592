"""``DistributedSampler``: each of ``num_replicas`` processes reads its own share of a dataset, PyTorch's
partition exactly.

An epoch's order (a permutation from ``seed + epoch`` with ``shuffle``, else 0..n-1) is padded by repeating
itself from the start up to a multiple of ``num_replicas`` (or, with ``drop_last``, cut down to one), and
rank r takes every ``num_replicas``-th index from position r. So every index is read once per epoch by one
rank (padding aside), and every rank reads ``len(sampler)`` of them.
"""
from __future__ import annotations

import math
from typing import Iterator, Sized

import numpy as np

from ...creation import randperm
from ...generator import Generator
from .sampler import _ArraySampler


class DistributedSampler(_ArraySampler):
    """``num_replicas`` and ``rank`` default to the default group's world size and rank. Call
    ``set_epoch(epoch)`` before each epoch, or every epoch has the same order."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        from ... import distributed as dist
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def index_chunks(self) -> Iterator[np.ndarray]:
        n = len(self.dataset)
        if self.shuffle:
            order = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch)).numpy()
        else:
            order = np.arange(n, dtype=np.int64)
        # np.resize repeats the order cyclically: PyTorch's padding (indices + indices[:pad], repeated as needed)
        order = order[:self.total_size] if self.drop_last else np.resize(order, self.total_size)
        yield order[self.rank:self.total_size:self.num_replicas]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order ``__iter__`` gives next (the shuffle's seed is ``seed + epoch``)."""
        self.epoch = epoch
