"""Run by tests/distributed/test_pipeline.py under ``mpiexec -n 2``: the MLP split over 2 ranks with GPipe's
schedule gives each rank's layers the gradients of the unsplit model on the whole batch."""
from __future__ import annotations

import copy
import sys

import numpy as np

import minitensor as mt
import minitensor.distributed as dist
from minitensor import nn
from minitensor.distributed.pipelining import PipelineStage, ScheduleGPipe, split_sequential


def main(n_microbatches: int, dtype_name: str) -> None:
    dtype = getattr(mt, dtype_name)
    rank = dist.get_rank()
    mt.manual_seed(0)  # the same full model on both ranks: each keeps its half, the reference is all of it
    full = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 4)).to(dtype)
    reference = copy.deepcopy(full)
    part = split_sequential(full, 2)[rank]
    g = mt.Generator().manual_seed(1)
    x, y = mt.randn(8, 3, 4, generator=g, dtype=dtype), mt.randint(0, 4, (8,), generator=g)
    loss_fn = nn.CrossEntropyLoss()
    schedule = ScheduleGPipe(PipelineStage(part, rank, 2, mt.device("cpu")), n_microbatches, loss_fn=loss_fn)
    losses: list[mt.Tensor] = []
    out = schedule.step(x) if rank == 0 else schedule.step(target=y, losses=losses)
    expected = reference(x)
    loss_fn(expected, y).backward()
    tol = 1e-12 if dtype == mt.float64 else 1e-6
    mine = {id(p) for p in part.parameters()}
    checked = 0
    for p, q in zip(full.parameters(), reference.parameters()):
        if id(p) in mine:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol)
            checked += 1
        else:
            assert p.grad is None  # the other rank's layers never ran here
    assert checked == len(list(part.parameters())) > 0
    if rank == 1:
        np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
        assert len(losses) == n_microbatches
        np.testing.assert_allclose(float(sum(losses)) / n_microbatches, float(loss_fn(expected, y)), rtol=tol)
    else:
        assert out is None


if __name__ == "__main__":
    dist.init_process_group("mpi")
    try:
        main(int(sys.argv[1]), sys.argv[2])
        sys.stdout.write(f"ok {dist.get_rank()}\n")  # one write: the ranks share the terminal
        sys.stdout.flush()
    finally:
        dist.destroy_process_group()
