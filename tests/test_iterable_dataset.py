"""minitensor.utils.data's iterable-style datasets (IterableDataset, ChainDataset), the DataLoader over
them (batching the stream, batch_size=None, per-worker sharding, len), StackDataset and default_convert."""
from __future__ import annotations

import collections
import math
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils.data import (ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                   SequentialSampler, StackDataset, TensorDataset, default_convert,
                                   get_worker_info)


class Range(IterableDataset):
    """start..end-1; in a worker, only the values congruent to the worker's id (a sharded stream)."""

    def __init__(self, start: int, end: int, sized: bool = True) -> None:
        self.start, self.end, self.sized = start, end, sized

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return iter(range(self.start + info.id, self.end, info.num_workers))

    def __len__(self) -> int:
        if not self.sized:
            raise TypeError("no length")
        return self.end - self.start


class Unsharded(IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


def batches(loader):
    return [b.tolist() if isinstance(b, mt.Tensor) else b for b in loader]


def chunks(values, size, drop_last):
    out = [values[i:i + size] for i in range(0, len(values), size)]
    return [c for c in out if len(c) == size] if drop_last else out


@pytest.mark.parametrize("n", [0, 1, 7, 9])
@pytest.mark.parametrize("batch_size", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_stream_batches_in_order(n, batch_size, drop_last):
    loader = DataLoader(Range(0, n), batch_size=batch_size, drop_last=drop_last)
    expected = chunks(list(range(n)), batch_size, drop_last)
    assert batches(loader) == expected
    assert len(loader) == len(expected) == (n // batch_size if drop_last else math.ceil(n / batch_size))
    assert batches(loader) == expected  # a second epoch starts a new stream


def test_two_workers_shard_the_stream_and_take_turns():
    # worker 0 has 0,2,4,6,8,10 and worker 1 has 1,3,5,7,9; batches alternate, short tails are kept
    loader = DataLoader(Range(0, 11), batch_size=2, num_workers=2)
    assert batches(loader) == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9]]
    assert sorted(sum(batches(loader), [])) == list(range(11))


def test_a_worker_whose_stream_ends_is_skipped():
    class Uneven(IterableDataset):  # worker 0: 1 batch, worker 1: 4 batches
        def __iter__(self):
            info = get_worker_info()
            return iter(range(2) if info.id == 0 else range(100, 108))
    got = batches(DataLoader(Uneven(), batch_size=2, num_workers=2, prefetch_factor=3))
    assert got == [[0, 1], [100, 101], [102, 103], [104, 105], [106, 107]]


def test_unsharded_stream_is_repeated_per_worker_and_len_warns():
    loader = DataLoader(Unsharded(3), batch_size=None, num_workers=2)
    assert batches(loader) == [0, 0, 1, 1, 2, 2]  # every worker yields the whole stream, as PyTorch

    class SizedUnsharded(Unsharded):
        def __len__(self) -> int:
            return self.n
    sized = DataLoader(SizedUnsharded(2), batch_size=None, num_workers=2)
    assert len(sized) == 2
    with pytest.warns(UserWarning, match="Length of IterableDataset was reported to be 2"):
        assert len(batches(sized)) == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(batches(DataLoader(SizedUnsharded(2), batch_size=None, num_workers=2))) == 4  # no len()


def test_worker_info_and_seeds_inside_the_stream():
    seen = []

    class Info(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            seen.append((info.id, info.num_workers, info.seed, info.dataset is ds))
            yield info.id

    ds = Info()
    out = batches(DataLoader(ds, batch_size=None, num_workers=2, generator=7))
    assert out == [0, 1]
    assert sorted(s[:2] for s in seen) == [(0, 2), (1, 2)] and all(s[3] for s in seen)
    seeds = {s[0]: s[2] for s in seen}
    assert seeds[1] == seeds[0] + 1


def test_batch_size_none_converts_each_sample():
    class Pairs(IterableDataset):
        def __iter__(self):
            for i in range(3):
                yield np.full(2, i, dtype=np.float32), i, "s"
    got = list(DataLoader(Pairs(), batch_size=None))
    assert len(got) == 3 and isinstance(got[0], list)
    assert got[2][0].dtype == mt.float32 and got[2][0].tolist() == [2.0, 2.0]
    assert got[2][1] == 2 and got[2][2] == "s"  # Python numbers and strings stay as they are
    assert list(DataLoader(Unsharded(3), batch_size=None, collate_fn=lambda x: x * 10)) == [0, 10, 20]


def test_collate_fn_gets_the_list_of_samples():
    out = list(DataLoader(Unsharded(5), batch_size=2, collate_fn=tuple))
    assert out == [(0, 1), (2, 3), (4,)]


def test_map_style_batch_size_none():
    ds = TensorDataset(mt.arange(4))
    got = list(DataLoader(ds, batch_size=None))
    assert [g[0].tolist() for g in got] == [0, 1, 2, 3] and all(g[0].ndim == 0 for g in got)
    got = list(DataLoader(ds, batch_size=None, num_workers=2))
    assert [g[0].tolist() for g in got] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)


def test_no_sampler_options_with_an_iterable_dataset():
    ds = Range(0, 4)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(ds, shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(ds, sampler=SequentialSampler(range(4)))
    with pytest.raises(ValueError, match="expected unspecified batch_sampler option"):
        DataLoader(ds, batch_sampler=[[0, 1]])
    assert batches(DataLoader(ds, shuffle=False)) == [[0], [1], [2], [3]]
    with pytest.raises(TypeError):
        len(DataLoader(Unsharded(3)))


def test_chain_and_add():
    a, b = Range(0, 3), Range(10, 12)
    chained = a + b
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 2, 10, 11] and len(chained) == 5
    assert batches(DataLoader(chained, batch_size=2)) == [[0, 1], [2, 10], [11]]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([a, TensorDataset(mt.arange(2))]))
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([a])
    m = TensorDataset(mt.arange(2)) + TensorDataset(mt.arange(3))
    assert isinstance(m, ConcatDataset) and len(m) == 5


def test_errors_in_a_stream_reach_the_consumer():
    class Bad(IterableDataset):
        def __iter__(self):
            yield 1
            raise KeyError("broken stream")
    for workers in (0, 2):
        with pytest.raises(KeyError, match="broken stream"):
            list(DataLoader(Bad(), batch_size=4, num_workers=workers))


def test_stack_dataset():
    a, b = TensorDataset(mt.arange(3)), [10, 20, 30]
    assert StackDataset(a, b)[1] == (a[1], 20)
    assert StackDataset(x=b, y=b)[2] == {"x": 30, "y": 30} and len(StackDataset(b, b)) == 3
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(b, [1])
    with pytest.raises(ValueError, match="both types"):
        StackDataset(b, y=b)
    with pytest.raises(ValueError, match="At least one dataset"):
        StackDataset()


def test_default_convert():
    Point = collections.namedtuple("Point", "x y")
    out = default_convert({"a": np.arange(3), "b": (np.float64(2.5), 1), "c": Point(np.array(1), "s")})
    assert out["a"].tolist() == [0, 1, 2] and out["a"].dtype == mt.int64
    assert isinstance(out["b"], list) and out["b"][0].dtype == mt.float64 and out["b"][1] == 1
    assert isinstance(out["c"], Point) and out["c"].x.ndim == 0 and out["c"].y == "s"
    strings = np.array(["a", "b"])
    assert default_convert(strings) is strings and default_convert(3) == 3
    t = mt.ones(2)
    assert default_convert(t) is t and default_convert(range(2)) == [0, 1]  # range(list) fails: a list, as PyTorch


def test_base_classes_say_what_is_missing():
    with pytest.raises(NotImplementedError, match="must implement __iter__"):
        iter(IterableDataset())
    assert isinstance(IterableDataset(), Dataset)


@pytest.mark.torch
def test_matches_torch_over_sharded_streams():
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data

    class TRange(tdata.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = tdata.get_worker_info()
            return iter(range(self.n)) if info is None else iter(range(info.id, self.n, info.num_workers))

        def __len__(self):
            return self.n

    for kw in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None},
               {"batch_size": 2, "num_workers": 2}):
        ours = DataLoader(Range(0, 10), **kw)
        theirs = tdata.DataLoader(TRange(10), **kw)
        assert batches(ours) == [b.tolist() if hasattr(b, "tolist") else b for b in theirs]
        assert len(ours) == len(theirs)
    for bad in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        with pytest.raises(ValueError) as ours_err:
            DataLoader(Range(0, 2), **bad)
        with pytest.raises(ValueError) as theirs_err:
            tdata.DataLoader(TRange(2), **bad)
        assert str(ours_err.value).split(", but")[0] == str(theirs_err.value).split(", but")[0]
    np_sample = {"a": np.arange(2), "b": (np.float32(1), "x")}
    ref = tdata.default_convert(np_sample)
    got = default_convert(np_sample)
    assert got["a"].tolist() == ref["a"].tolist() and type(got["b"]) is type(ref["b"])
