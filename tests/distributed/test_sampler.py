"""DistributedSampler: PyTorch's partition of a dataset over replicas (no MPI needed: ``num_replicas`` and
``rank`` are given; the MPI worker checks the defaults from a real group)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor.utils.data import DataLoader, DistributedSampler, TensorDataset


def pytorch_rule(order: list[int], replicas: int, rank: int, drop_last: bool) -> list[int]:
    """torch.utils.data.DistributedSampler.__iter__'s list arithmetic, transcribed, on a given order."""
    n = len(order)
    num_samples = math.ceil((n - replicas) / replicas) if drop_last and n % replicas else math.ceil(n / replicas)
    total = num_samples * replicas
    indices = list(order)
    if not drop_last:
        pad = total - n
        indices += indices[:pad] if pad <= n else (indices * math.ceil(pad / n))[:pad]
    else:
        indices = indices[:total]
    return indices[rank:total:replicas]


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    return mt.randperm(n, generator=mt.Generator().manual_seed(seed + epoch)).tolist()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 70), replicas=st.integers(1, 9), drop_last=st.booleans(), shuffle=st.booleans(),
       seed=st.integers(0, 2**31), epoch=st.integers(0, 5))
def test_the_shares_are_pytorchs_partition(n, replicas, drop_last, shuffle, seed, epoch):
    order = epoch_order(n, seed, epoch) if shuffle else list(range(n))
    shares = []
    for rank in range(replicas):
        sampler = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
        sampler.set_epoch(epoch)
        share = list(sampler)
        assert share == pytorch_rule(order, replicas, rank, drop_last)
        assert len(share) == len(sampler)
        shares += share
    counts = np.bincount(shares, minlength=n)
    if drop_last:  # each index read at most once; fewer than `replicas` left out
        assert counts.max(initial=0) <= 1 and n - counts.sum() < replicas
    else:  # each index read at least once; the padding repeats the order from its start
        assert counts.min() >= 1 and counts.sum() == math.ceil(n / replicas) * replicas


@pytest.mark.parametrize("n, replicas", [(12, 3), (8, 2), (20, 4)])
def test_every_index_exactly_once_per_epoch(n, replicas):
    for epoch in range(3):
        shares = []
        for rank in range(replicas):
            sampler = DistributedSampler(range(n), replicas, rank, seed=5)
            sampler.set_epoch(epoch)
            shares.append(list(sampler))
        assert sorted(sum(shares, [])) == list(range(n))
        if epoch == 0:
            first = shares
    assert shares != first  # a new epoch, a new order


def test_same_epoch_same_order_and_no_set_epoch_same_order():
    a = DistributedSampler(range(30), 2, 0, seed=3)
    b = DistributedSampler(range(30), 2, 0, seed=3)
    assert list(a) == list(b) == list(a)
    assert list(DistributedSampler(range(30), 2, 0, seed=4)) != list(a)
    assert list(DistributedSampler(range(30), 2, 1, shuffle=False)) == list(range(1, 30, 2))


def test_small_dataset_padding_wraps_several_times():
    assert [list(DistributedSampler(range(2), 5, r, shuffle=False)) for r in range(5)] == [[0], [1], [0], [1], [0]]
    assert list(DistributedSampler(range(0), 3, 2)) == []
    assert len(DistributedSampler(range(2), 5, 0, drop_last=True)) == 0


def test_bad_rank_and_no_group():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(5), 3, 3)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(5), 3, -1)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(5))


def test_in_a_dataloader():
    data = TensorDataset(mt.arange(10))
    sampler = DistributedSampler(data, 2, 1, shuffle=False)
    batches = [b[0].tolist() for b in DataLoader(data, batch_size=2, sampler=sampler)]
    assert batches == [[1, 3], [5, 7], [9]]


@pytest.mark.torch
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (2, 5, False), (9, 3, True),
                                                    (17, 4, False), (17, 4, True)])
def test_matches_pytorchs_sampler(n, replicas, drop_last, shuffle, monkeypatch):
    """Index for index with torch's sampler. torch's randperm draws other bits than minitensor's (mt19937 and
    PCG64, docs/differences.md), so with shuffle torch's sampler is handed minitensor's epoch order."""
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    monkeypatch.setattr(torch, "randperm", lambda k, generator: torch.tensor(epoch_order(k, 7, 2)))
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=7, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=shuffle, seed=7, drop_last=drop_last)
        ours.set_epoch(2)
        theirs.set_epoch(2)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
