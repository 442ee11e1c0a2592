"""Functions the processes of tests/test_multiprocessing.py run (importable by a spawned child)."""
from __future__ import annotations

import minitensor as mt
import minitensor.nn as nn


def hogwild_step(rank: int, model: nn.Module, steps: int) -> None:
    """Each process adds (rank + 1) to every weight, one in-place write per step."""
    with mt.no_grad():
        for _ in range(steps):
            for p in model.parameters():
                p.add_(rank + 1)


def write_rank(rank: int, shared: mt.Tensor) -> None:
    shared[rank] = float(rank + 10)


def fail_on_rank_one(rank: int) -> None:
    if rank == 1:
        raise ValueError("rank one fails on purpose")


def take_from_queue(queue, done) -> None:
    t = queue.get()
    t.mul_(2)
    done.put(t.is_shared())
