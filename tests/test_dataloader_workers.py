"""DataLoader worker threads: seeded as PyTorch seeds its worker processes (reproducible augmentation,
worker_init_fn, get_worker_info, initial_seed), and never holding the program at exit or on close."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import minitensor as mt
from minitensor.utils.data import DataLoader, Dataset, WorkerInfo, get_worker_info


class Augmented(Dataset):
    """Item i: i plus noise drawn from minitensor's generator (a random augmentation), after a delay that
    varies with i, so that the threads interleave differently from run to run."""

    def __init__(self, n=24):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep((i * 7 % 5) * 0.001)
        return mt.tensor(float(i)) + mt.rand(()), mt.randint(0, 1000, ())


def run_epoch(loader):
    return np.concatenate([np.stack([x.numpy(), y.numpy()], axis=1) for x, y in loader])


@pytest.mark.parametrize("workers", [2, 3])
def test_augmentation_in_workers_is_reproducible_under_manual_seed(workers):
    loader = DataLoader(Augmented(), batch_size=2, num_workers=workers, prefetch_factor=3)
    runs = []
    for seed in (7, 7, 7, 8):
        mt.manual_seed(seed)
        runs.append(run_epoch(loader))
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])
    assert not np.array_equal(runs[0], runs[3])
    mt.manual_seed(7)
    run_epoch(loader)
    assert not np.array_equal(run_epoch(loader), runs[0])  # a new base seed every epoch


def test_an_int_generator_seeds_the_workers_whatever_the_global_seed():
    def epoch(seed, global_seed):
        mt.manual_seed(global_seed)
        return run_epoch(DataLoader(Augmented(), batch_size=3, shuffle=True, num_workers=2, generator=seed))
    np.testing.assert_array_equal(epoch(3, 0), epoch(3, 1))
    assert not np.array_equal(epoch(3, 0), epoch(4, 0))


class Reporting(Dataset):
    """Item i: (worker id, worker seed, initial_seed(), the worker's first draw of mt.rand(2)...)."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = get_worker_info()
        return (np.array([info.id, info.num_workers, info.seed, mt.initial_seed()], dtype=np.int64),
                mt.rand(2))


def test_worker_seeds_follow_pytorch_base_seed_plus_id():
    mt.manual_seed(11)
    rows, draws = [], []
    for ids, noise in DataLoader(Reporting(), batch_size=1, num_workers=3):
        rows.append(ids.numpy()[0])
        draws.append(noise.numpy()[0])
    rows = np.array(rows)
    np.testing.assert_array_equal(rows[:, 0], np.arange(12) % 3)  # batch j loaded by worker j % 3
    assert (rows[:, 1] == 3).all() and (rows[:, 2] == rows[:, 3]).all()  # initial_seed() is the worker seed
    base = rows[0, 2]
    np.testing.assert_array_equal(rows[:, 2], base + rows[:, 0])
    for worker in range(3):  # the worker's draws are those of a generator seeded with base + id
        mt.manual_seed(int(base) + worker)
        expected = np.stack([mt.rand(2).numpy() for _ in range(4)])
        np.testing.assert_array_equal(np.stack(draws[worker::3]), expected)
    mt.manual_seed(5)
    assert mt.initial_seed() == 5 and get_worker_info() is None


def test_worker_init_fn_runs_in_each_worker_with_its_id_and_its_seeding_stays_there():
    calls = []

    def init(worker_id):
        info = get_worker_info()
        calls.append((worker_id, info.id, threading.current_thread() is not threading.main_thread()))
        mt.manual_seed(1000 + worker_id)  # the worker's own generator only
    mt.manual_seed(0)
    loader = DataLoader(Reporting(), batch_size=4, num_workers=2, worker_init_fn=init)
    _, noise = next(iter(loader))
    after_loader = mt.rand(3).numpy()
    assert sorted(calls) == [(0, 0, True), (1, 1, True)]
    mt.manual_seed(1000)
    np.testing.assert_array_equal(noise.numpy()[0], mt.rand(2).numpy())  # batch 0: worker 0's reseeded draw
    mt.manual_seed(0)
    mt.randint(0, 2**62, ())  # what the iterator drew for its base seed
    np.testing.assert_array_equal(after_loader, mt.rand(3).numpy())  # the main thread's stream is untouched
    with pytest.raises(RuntimeError, match="Cannot assign"):
        WorkerInfo(0, 1, 0, None).id = 3


def test_an_error_in_worker_init_fn_reaches_the_consumer():
    def init(worker_id):
        raise ValueError(f"no setup for worker {worker_id}")
    with pytest.raises(ValueError, match="no setup for worker 0"):
        next(iter(DataLoader(Reporting(), batch_size=2, num_workers=2, worker_init_fn=init)))


# --------------------------------------------------------------------------------- stopping promptly
class Blocked(Dataset):
    """Every item waits on an event (I/O that never answers) until the test releases it."""

    def __init__(self):
        self.release = threading.Event()

    def __len__(self):
        return 100

    def __getitem__(self, i):
        self.release.wait(30)
        return i


def test_closing_an_iterator_whose_dataset_is_blocked_returns_in_bounded_time():
    ds = Blocked()
    it = iter(DataLoader(ds, batch_size=1, num_workers=2))
    start = time.monotonic()
    it.close()
    assert time.monotonic() - start < 10  # bounded join (1 s), not the 30 s an item blocks
    with pytest.raises(StopIteration):
        next(it)
    ds.release.set()


SLOW_PROGRAM = """
import sys, threading, time
import minitensor as mt
from minitensor.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 90
    def __getitem__(self, i):
        if i > 0:
            {body}
        return i

loader = DataLoader(Slow(), batch_size=1, num_workers=2, prefetch_factor=45)
it = iter(loader)
next(it)  # the first batch arrives; 89 more are queued behind the two being loaded
print("started", flush=True)
"""


@pytest.mark.parametrize("body", ["time.sleep(1.0)", "threading.Event().wait()"],
                         ids=["45 s of slow items queued", "blocked on I/O forever"])
def test_the_program_exits_promptly_with_work_queued(body):
    program = SLOW_PROGRAM.replace("{body}", body)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(program)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "started"
    start = time.monotonic()
    try:
        assert child.wait(timeout=30) == 0
    finally:
        child.kill()
    assert time.monotonic() - start < 5  # at most the bounded join, never the queued work
