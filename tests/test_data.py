"""minitensor.utils.data: datasets, samplers, collation, and the DataLoader (batching, shuffling,
prefetch threads, the TensorDataset fast path), against references written here."""
from __future__ import annotations

import collections
import math
import threading
import time
import traceback

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, RandomSampler,
                                   SequentialSampler, Subset, TensorDataset, default_collate, random_split)

FEW = settings(max_examples=30, deadline=None)


def arr(t):
    return np.asarray(t.numpy())


def run_with_deadline(fn, seconds=10.0):
    """Run fn in a daemon thread; fail (instead of hanging the suite) if it has not finished in time."""
    result, errors = [], []

    def target():
        try:
            result.append(fn())
        except BaseException as e:  # noqa: BLE001 - handed back to the test thread
            errors.append(e)
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"did not finish within {seconds} s (hang)"
    if errors:
        raise errors[0]
    return result[0]


def loader_threads():
    return [t for t in threading.enumerate() if t.name.startswith("minitensor-DataLoader")]


def wait_for_no_loader_threads(seconds=5.0):
    deadline = time.monotonic() + seconds
    while loader_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not loader_threads(), f"loader threads still running: {loader_threads()}"


class Squares(Dataset):
    """Item i -> (i, i*i as float32 array (2,)); optionally slow or failing at one index."""

    def __init__(self, n, delay=0.0, fail_at=None):
        self.n, self.delay, self.fail_at = n, delay, fail_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        return i, np.array([i, i * i], dtype=np.float32)


# ------------------------------------------------------------------------------------------ datasets
def test_tensor_dataset_items_and_length():
    x = mt.tensor(np.arange(12, dtype=np.float32).reshape(6, 2))
    y = mt.tensor(np.arange(6) * 10)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    xi, yi = ds[4]
    np.testing.assert_array_equal(arr(xi), [8.0, 9.0])
    assert int(yi) == 40
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, mt.tensor(np.arange(5)))


def test_subset_concat_and_add():
    a, b = Squares(3), Squares(4)
    cat = a + b
    assert isinstance(cat, ConcatDataset) and len(cat) == 7
    assert [cat[i][0] for i in range(7)] == [0, 1, 2, 0, 1, 2, 3]
    assert cat[-1][0] == 3 and cat[-7][0] == 0
    with pytest.raises(IndexError):
        cat[7]
    with pytest.raises(IndexError):
        cat[-8]
    sub = Subset(Squares(10), [9, 3, 5])
    assert len(sub) == 3 and [sub[i][0] for i in range(3)] == [9, 3, 5]


def test_dataset_base_requires_getitem():
    with pytest.raises(NotImplementedError):
        Dataset()[0]


# -------------------------------------------------------------------------------------- random_split
def reference_fraction_counts(fractions, n):
    """PyTorch's rule, written out: floor(n * f), then the remainder dealt round-robin from the first."""
    counts = [int(math.floor(n * f)) for f in fractions]
    k = 0
    while sum(counts) < n:
        counts[k % len(counts)] += 1
        k += 1
    return counts


@pytest.mark.filterwarnings("ignore:length of split")  # counts like [1, 0] of 1 read as fractions
@FEW
@given(n=st.integers(1, 60), parts=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_random_split_counts_partition_the_dataset(n, parts, seed):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, n + 1, size=parts - 1))
    counts = np.diff(np.concatenate([[0], cuts, [n]])).tolist()
    splits = random_split(range(n), counts, generator=seed)
    assert [len(s) for s in splits] == counts
    together = sorted(i for s in splits for i in s.indices)
    assert together == list(range(n))
    again = random_split(range(n), counts, generator=seed)
    assert [s.indices for s in splits] == [s.indices for s in again]


def test_random_split_fractions_follow_pytorchs_remainder_rule():
    for fractions, n in [([0.3, 0.7], 10), ([1 / 3] * 3, 10), ([0.5, 0.25, 0.25], 7), ([0.8, 0.2], 1797)]:
        splits = random_split(range(n), fractions, generator=1)
        assert [len(s) for s in splits] == reference_fraction_counts(fractions, n)
        assert sorted(i for s in splits for i in s.indices) == list(range(n))


def test_random_split_errors_and_global_seed():
    with pytest.raises(ValueError, match="does not equal"):
        random_split(range(10), [3, 4])
    with pytest.raises(ValueError):
        random_split(range(10), [11, -1])
    mt.manual_seed(7)
    first = [s.indices for s in random_split(range(20), [10, 10])]
    mt.manual_seed(7)
    second = [s.indices for s in random_split(range(20), [10, 10])]
    assert first == second
    different = [s.indices for s in random_split(range(20), [10, 10], generator=123)]
    assert different != first


# ------------------------------------------------------------------------------------------ samplers
def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert list(BatchSampler(SequentialSampler(range(7)), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(SequentialSampler(range(7)), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    # any iterable of indices works, grouped one by one
    assert list(BatchSampler([5, 1, 4, 2, 0], 2, False)) == [[5, 1], [4, 2], [0]]
    assert len(BatchSampler(range(7), 3, False)) == 3 and len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError):
        BatchSampler(range(3), 0, False)


def test_random_sampler_permutations_and_replacement():
    n = 9
    s = RandomSampler(range(n), generator=3)
    epochs = [list(s) for _ in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(n))
    assert epochs[0] != epochs[1] or epochs[1] != epochs[2]
    long = list(RandomSampler(range(n), num_samples=2 * n + 4, generator=0))
    assert len(long) == 2 * n + 4
    assert sorted(long[:n]) == list(range(n)) and sorted(long[n:2 * n]) == list(range(n))
    assert len(set(long[2 * n:])) == 4
    drawn = list(RandomSampler(range(n), replacement=True, num_samples=500, generator=0))
    assert len(drawn) == 500 and set(drawn) <= set(range(n)) and len(set(drawn)) == n
    with pytest.raises(ValueError):
        RandomSampler(range(0))
    with pytest.raises(TypeError):
        RandomSampler(range(3), generator="seed")


# ------------------------------------------------------------------------------------------ collate
def test_default_collate_tensors_arrays_numbers_strings():
    samples = [(mt.tensor([float(i), 2.0 * i]), np.full((2, 2), i, dtype=np.int32), i, 0.5 * i, f"s{i}",
                np.float32(i), i % 2 == 0) for i in range(3)]
    t, a, ints, floats, strs, npscalars, bools = default_collate(samples)
    np.testing.assert_array_equal(arr(t), [[0, 0], [1, 2], [2, 4]])
    assert t.dtype == mt.float32
    np.testing.assert_array_equal(arr(a), np.stack([np.full((2, 2), i, dtype=np.int32) for i in range(3)]))
    assert a.dtype == mt.int32
    assert ints.dtype == mt.int64 and arr(ints).tolist() == [0, 1, 2]
    assert floats.dtype == mt.float64 and arr(floats).tolist() == [0.0, 0.5, 1.0]  # PyTorch's rule
    assert strs == ["s0", "s1", "s2"]
    assert npscalars.dtype == mt.float32 and arr(npscalars).tolist() == [0.0, 1.0, 2.0]
    assert bools.dtype == mt.bool and arr(bools).tolist() == [True, False, True]


def test_default_collate_nested_dicts_lists_namedtuples():
    Pair = collections.namedtuple("Pair", "left right")
    samples = [{"x": np.array([i, i + 1.0]), "meta": {"id": i, "tags": [i, 10 * i]}, "p": Pair(i, -i)}
               for i in range(4)]
    batch = default_collate(samples)
    assert set(batch) == {"x", "meta", "p"}
    np.testing.assert_array_equal(arr(batch["x"]), [[i, i + 1.0] for i in range(4)])
    assert arr(batch["meta"]["id"]).tolist() == [0, 1, 2, 3]
    assert isinstance(batch["meta"]["tags"], list)
    assert [arr(c).tolist() for c in batch["meta"]["tags"]] == [[0, 1, 2, 3], [0, 10, 20, 30]]
    assert isinstance(batch["p"], Pair) and arr(batch["p"].right).tolist() == [0, -1, -2, -3]
    # tuple samples give a list of columns, as in PyTorch
    assert isinstance(default_collate([(1, 2), (3, 4)]), list)


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found"):
        default_collate([None, None])
    with pytest.raises(TypeError, match="found"):
        default_collate([np.array(["a"]), np.array(["b"])])


# ----------------------------------------------------------------------------------------- batching
@FEW
@given(n=st.integers(1, 40), batch_size=st.integers(1, 12), drop_last=st.booleans(),
       workers=st.sampled_from([0, 2]))
def test_sequential_batches_match_slicing(n, batch_size, drop_last, workers):
    data = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    ds = TensorDataset(mt.tensor(data), mt.tensor(np.arange(n)))
    loader = DataLoader(ds, batch_size=batch_size, drop_last=drop_last, num_workers=workers)
    expected_starts = range(0, n - n % batch_size if drop_last else n, batch_size)
    batches = list(loader)
    assert len(batches) == len(loader) == len(expected_starts)
    for (x, y), start in zip(batches, expected_starts):
        np.testing.assert_array_equal(arr(x), data[start:start + batch_size])
        np.testing.assert_array_equal(arr(y), np.arange(start, min(start + batch_size, n)))
        assert x.dtype == mt.float32 and y.dtype == mt.int64


def epoch_order(loader):
    return np.concatenate([arr(y) for _, y in loader]).tolist()


def test_shuffle_is_seeded_and_changes_every_epoch():
    n = 50
    ds = TensorDataset(mt.zeros(n, 1), mt.arange(n))
    a = DataLoader(ds, batch_size=8, shuffle=True, generator=42)
    b = DataLoader(ds, batch_size=8, shuffle=True, generator=42)
    first_a, second_a = epoch_order(a), epoch_order(a)
    assert first_a == epoch_order(b) and second_a == epoch_order(b)
    assert sorted(first_a) == list(range(n)) and sorted(second_a) == list(range(n))
    assert first_a != second_a and first_a != list(range(n))
    c = DataLoader(ds, batch_size=8, shuffle=True, generator=np.random.default_rng(42))
    assert epoch_order(c) == first_a  # an int seed means np.random.default_rng(seed)
    # without a generator, minitensor.manual_seed reproduces the order
    mt.manual_seed(5)
    g1 = epoch_order(DataLoader(ds, batch_size=8, shuffle=True))
    mt.manual_seed(5)
    g2 = epoch_order(DataLoader(ds, batch_size=8, shuffle=True))
    assert g1 == g2 and sorted(g1) == list(range(n))


def test_shuffled_drop_last_and_len():
    ds = TensorDataset(mt.arange(23))
    loader = DataLoader(ds, batch_size=5, shuffle=True, drop_last=True, generator=0)
    sizes = [len(b[0]) for b in loader]
    assert sizes == [5, 5, 5, 5] and len(loader) == 4
    loader = DataLoader(ds, batch_size=5, shuffle=True, generator=0)
    assert [len(b[0]) for b in loader] == [5, 5, 5, 5, 3] and len(loader) == 5


def test_collate_of_tuples_and_dicts_through_the_loader():
    class Dicts(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"image": np.full((2, 2), i, dtype=np.float32), "label": i, "name": f"n{i}"}
    batches = list(DataLoader(Dicts(), batch_size=2))
    assert [b["name"] for b in batches] == [["n0", "n1"], ["n2", "n3"], ["n4"]]
    np.testing.assert_array_equal(arr(batches[1]["image"]), np.stack([np.full((2, 2), i, np.float32)
                                                                       for i in (2, 3)]))
    assert arr(batches[2]["label"]).tolist() == [4]
    ids, values = next(iter(DataLoader(Squares(6), batch_size=4)))
    assert arr(ids).tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(arr(values), [[i, i * i] for i in range(4)])


def test_custom_collate_batch_sampler_and_option_errors():
    loader = DataLoader(Squares(6), batch_sampler=[[5, 0], [2]], collate_fn=lambda b: [s[0] for s in b])
    assert list(loader) == [[5, 0], [2]] and len(loader) == 2 and loader.batch_size is None
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(Squares(6), sampler=SequentialSampler(range(6)), shuffle=True)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(Squares(6), batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError):
        DataLoader(Squares(6), num_workers=-1)


# -------------------------------------------------------------------------------------------- fast path
def slow_collate(batch):
    return default_collate(batch)  # not default_collate itself, so the loader takes the per-sample path


@FEW
@given(seed=st.integers(0, 2**31), batch_size=st.integers(1, 9), nested=st.booleans())
def test_fast_path_equals_per_sample_path(seed, batch_size, nested):
    rng = np.random.default_rng(seed)
    n = 30
    ds = TensorDataset(mt.tensor(rng.standard_normal((n, 2, 3)).astype(np.float32)),
                       mt.tensor(rng.integers(0, 10, n)), mt.tensor(rng.random(n) < 0.5))
    if nested:
        ds = Subset(Subset(ds, rng.permutation(n)[:20].tolist()), rng.permutation(20)[:15].tolist())
    fast = list(DataLoader(ds, batch_size=batch_size, shuffle=True, generator=seed))
    slow = list(DataLoader(ds, batch_size=batch_size, shuffle=True, generator=seed, collate_fn=slow_collate))
    assert len(fast) == len(slow)
    for fb, sb in zip(fast, slow):
        assert isinstance(fb, list) and isinstance(sb, list) and len(fb) == len(sb) == 3
        for f, s in zip(fb, sb):
            assert f.dtype == s.dtype and f.shape == s.shape
            np.testing.assert_array_equal(arr(f), arr(s))


def test_fast_path_indexes_whole_batches(monkeypatch):
    ds = TensorDataset(mt.arange(10), mt.arange(10) * 2)
    monkeypatch.setattr(TensorDataset, "__getitem__", lambda self, i: pytest.fail("per-sample access"))
    (x, y), = list(DataLoader(Subset(ds, [7, 1, 3]), batch_size=3))
    assert arr(x).tolist() == [7, 1, 3] and arr(y).tolist() == [14, 2, 6]


# -------------------------------------------------------------------------------------------- threads
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_worker_threads_keep_order_and_values(workers):
    ds = Squares(37, delay=0.001)
    expected = [(arr(i).tolist(), arr(v).tolist()) for i, v in DataLoader(ds, batch_size=4, shuffle=True,
                                                                          generator=9)]
    got = run_with_deadline(lambda: [(arr(i).tolist(), arr(v).tolist()) for i, v in
                                     DataLoader(ds, batch_size=4, shuffle=True, generator=9,
                                                num_workers=workers)])
    assert got == expected
    wait_for_no_loader_threads()


def test_prefetch_is_bounded():
    loaded = []

    def counting_collate(batch):
        loaded.append(len(batch))
        return default_collate(batch)
    loader = DataLoader(Squares(40), batch_size=2, num_workers=1, prefetch_factor=2,
                        collate_fn=counting_collate)
    it = iter(loader)
    next(it)
    time.sleep(0.3)  # give the thread every chance to run ahead
    assert 1 <= len(loaded) <= 1 + 1 * 2, f"{len(loaded)} batches loaded with one consumed"
    it.close()


@pytest.mark.parametrize("workers", [0, 2])
def test_early_break_does_not_hang_and_stops_threads(workers):
    loader = DataLoader(Squares(200, delay=0.005), batch_size=2, num_workers=workers,
                        prefetch_factor=4 if workers else None)  # (PyTorch refuses one without workers)

    def consume_two():
        seen = []
        for ids, _ in loader:
            seen.append(arr(ids).tolist())
            if len(seen) == 2:
                break
        return seen
    assert run_with_deadline(consume_two) == [[0, 1], [2, 3]]
    wait_for_no_loader_threads()
    # dropping a half-used iterator also stops its threads
    it = iter(loader)
    next(it)
    del it
    wait_for_no_loader_threads()


@pytest.mark.parametrize("workers", [0, 2])
def test_loading_errors_reach_the_consumer_with_their_traceback(workers):
    loader = DataLoader(Squares(20, fail_at=9), batch_size=4, num_workers=workers)
    it = iter(loader)
    got = []
    with pytest.raises(ValueError, match="bad sample 9") as info:
        run_with_deadline(lambda: [got.append(b) for b in it])
    assert len(got) == 2  # batches [0..3] and [4..7] arrived before the failing one
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "__getitem__" in frames  # the original traceback, from inside the dataset
    with pytest.raises(StopIteration):
        next(it)
    wait_for_no_loader_threads()


def test_device_moves_every_tensor_in_the_batch(device):
    ds = TensorDataset(mt.arange(6), mt.arange(6) * 1.5)
    loader = DataLoader(ds, batch_size=4, device=device, collate_fn=lambda b: {"pair": default_collate(b)})
    batches = list(loader)
    for b in batches:
        x, y = b["pair"]
        assert x.device == device and y.device == device
    np.testing.assert_array_equal(batches[1]["pair"][1].cpu().numpy(), [6.0, 7.5])
