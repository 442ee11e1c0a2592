"""Samplers draw as iteration goes (makemore's ``RandomSampler(ds, replacement=True, num_samples=int(1e10))``):
no memory proportional to ``num_samples``, ``len`` still exact, and a seeded stream gives the same sequence
whatever the chunking."""
from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils.data import sampler as sampler_mod

HUGE = int(1e10)


def huge_sampler_idioms(lib, weighted_draws=HUGE):
    """What a program sees of samplers of 10**10 draws: lengths, the first batches' shapes and ranges.
    (PyTorch's WeightedRandomSampler draws its whole epoch at once: its twin asks for fewer.)"""
    data = lib.utils.data
    ds = data.TensorDataset(lib.arange(20).reshape(10, 2).float(), lib.arange(10))
    rs = data.RandomSampler(ds, replacement=True, num_samples=HUGE)
    loader = data.DataLoader(ds, batch_size=4, sampler=rs)
    xb, yb = next(iter(loader))
    ws = data.WeightedRandomSampler([0.0, 1.0, 1.0], weighted_draws)
    bs = data.BatchSampler(rs, 3, drop_last=True)
    first = list(itertools.islice(iter(ws), 50))
    batch = next(iter(bs))
    perm = data.RandomSampler(ds, num_samples=HUGE)  # passes of permutations, one at a time
    passes = list(itertools.islice(iter(perm), 20))
    subset = data.SubsetRandomSampler([7, 3, 5])
    return {"len": (len(rs), len(loader), len(ws), len(bs), len(perm), len(subset)),
            "batch": (tuple(xb.shape), tuple(yb.shape), all(0 <= int(v) < 10 for v in yb)),
            "weighted": set(first) <= {1, 2}, "batch_sampler": (len(batch), all(0 <= i < 10 for i in batch)),
            "passes": (sorted(passes[:10]) == list(range(10)), sorted(passes[10:]) == list(range(10))),
            "subset": sorted(subset)}


def test_huge_samplers_are_lazy_and_keep_their_length():
    tracemalloc.start()
    try:
        seen = huge_sampler_idioms(mt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20  # the whole array of 10**10 indices would be 74.5 GiB
    assert seen["len"] == (HUGE, HUGE // 4, HUGE, HUGE // 3, HUGE, 3)
    assert seen["batch"] == ((4, 2), (4,), True) and seen["weighted"]
    assert seen["batch_sampler"] == (3, True) and seen["passes"] == (True, True) and seen["subset"] == [3, 5, 7]


def test_chunked_draws_give_the_one_shot_sequence():
    n = 2 * sampler_mod.CHUNK + 5
    ours = list(mt.utils.data.RandomSampler(range(7), replacement=True, num_samples=n, generator=5))
    assert ours == np.random.default_rng(5).integers(0, 7, size=n, dtype=np.int64).tolist()
    batches = list(mt.utils.data.BatchSampler(
        mt.utils.data.RandomSampler(range(7), replacement=True, num_samples=n, generator=5), 7, drop_last=False))
    assert [i for b in batches for i in b] == ours and len(batches[-1]) == n % 7
    assert all(len(b) == 7 for b in batches[:-1])


def test_subset_random_sampler_reproduces_with_a_seed():
    indices = [10, 11, 12, 13, 14, 15]
    a = list(mt.utils.data.SubsetRandomSampler(indices, generator=mt.Generator().manual_seed(3)))
    b = list(mt.utils.data.SubsetRandomSampler(indices, generator=mt.Generator().manual_seed(3)))
    assert a == b and sorted(a) == indices
    mt.manual_seed(1)
    c = list(mt.utils.data.SubsetRandomSampler(indices))
    mt.manual_seed(1)
    assert list(mt.utils.data.SubsetRandomSampler(indices)) == c


@pytest.mark.torch
def test_huge_samplers_match_torch():
    torch = pytest.importorskip("torch")
    assert huge_sampler_idioms(mt, 1000) == huge_sampler_idioms(torch, 1000)
