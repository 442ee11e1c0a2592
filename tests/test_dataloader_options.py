"""PyTorch's DataLoader signature (positional order, keyword-only options) and its option checks;
persistent workers: one set of loading threads for every pass, seeded and initialised once."""
from __future__ import annotations

import gc
import inspect
import threading
import time

import pytest

import minitensor as mt
from minitensor.utils.data import DataLoader, IterableDataset, TensorDataset, get_worker_info

PYTORCH_PARAMETERS = ["self", "dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
                      "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
                      "multiprocessing_context", "generator", "prefetch_factor", "persistent_workers",
                      "pin_memory_device", "in_order"]


def test_signature_is_pytorchs_plus_device():
    params = inspect.signature(DataLoader.__init__).parameters
    assert list(params)[:-1] == PYTORCH_PARAMETERS and list(params)[-1] == "device"
    assert [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY] == PYTORCH_PARAMETERS[14:] + ["device"]


@pytest.mark.torch
def test_signature_matches_pytorch():
    torch = pytest.importorskip("torch")
    assert list(inspect.signature(torch.utils.data.DataLoader.__init__).parameters) == PYTORCH_PARAMETERS


def test_positional_arguments_in_pytorchs_order():
    ds = TensorDataset(mt.arange(6.0))
    # batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last, timeout
    loader = DataLoader(ds, 4, False, None, None, 0, None, False, True, 0)
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0, 2.0, 3.0]]


@pytest.mark.parametrize("kwargs, error", [
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified in multiprocessing"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(multiprocessing_context="spawn"), "multiprocessing_context can only be used with multi-process"),
    (dict(num_workers=1, multiprocessing_context="nonsense"), "should specify a valid start method"),
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(num_workers=1, prefetch_factor=-1), "prefetch_factor option should be non-negative"),
])
def test_option_checks(kwargs, error):
    with pytest.raises(ValueError, match=error):
        DataLoader(TensorDataset(mt.arange(4.0)), **kwargs)


def test_options_are_kept():
    loader = DataLoader(TensorDataset(mt.arange(4.0)), num_workers=1, multiprocessing_context="spawn",
                        persistent_workers=True, pin_memory_device="cuda", in_order=False, prefetch_factor=3)
    assert (loader.multiprocessing_context, loader.persistent_workers, loader.pin_memory_device,
            loader.in_order, loader.prefetch_factor) == ("spawn", True, "cuda", False, 3)


def test_persistent_workers_serve_every_pass():
    """The same threads load every epoch: worker_init_fn runs once per worker, the seeds stay."""
    inits, seen = [], []

    class Probe(mt.utils.data.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            info = get_worker_info()
            seen.append((threading.get_ident(), info.seed))
            return mt.tensor(float(i))

    loader = DataLoader(Probe(), batch_size=2, num_workers=2, persistent_workers=True,
                        worker_init_fn=inits.append)
    first = [b.tolist() for b in loader]
    threads_first = {t for t, _ in seen}
    seen.clear()
    second = [b.tolist() for b in loader]
    assert first == second == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert sorted(inits) == [0, 1] and {t for t, _ in seen} == threads_first and len(threads_first) == 2
    loader_once = DataLoader(Probe(), batch_size=2, num_workers=2, worker_init_fn=inits.append)
    inits.clear()
    list(loader_once), list(loader_once)
    assert sorted(inits) == [0, 0, 1, 1]  # without: new threads (and worker_init_fn calls) each pass
    del loader
    assert_threads_end()


def assert_threads_end():
    """Dropping the loader stops its persistent threads."""
    gc.collect()
    deadline = time.monotonic() + 5
    while any(t.name.startswith("minitensor-DataLoader") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "persistent loader threads outlived their loader"
        time.sleep(0.01)


def test_persistent_workers_restart_an_iterable_dataset_each_pass():
    class Stream(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            return iter(range(info.id, 6, info.num_workers))

    loader = DataLoader(Stream(), batch_size=None, num_workers=2, persistent_workers=True)
    assert sorted(int(x) for x in loader) == list(range(6))
    assert sorted(int(x) for x in loader) == list(range(6))
    del loader
    assert_threads_end()
