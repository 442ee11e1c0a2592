"""ZeroRedundancyOptimizer under mpiexec: every rank's parameters after each step equal one plain AdamW's on the
same gradients, each rank's local optimizer holds only its shard (PyTorch's greedy split), a scheduler's lr on
the wrapper reaches the shards, and a group added later is split too. Run by test_zero.py; prints ``ok <rank>``."""
from __future__ import annotations

import sys

import numpy as np

import minitensor as mt
import minitensor.distributed as dist
from minitensor.distributed.optim import ZeroRedundancyOptimizer


def model() -> list[mt.Tensor]:
    g = np.random.default_rng(0)  # the same start on every rank
    return [mt.tensor(g.standard_normal(shape).astype(np.float32), requires_grad=True)
            for shape in ((6, 5), (7,), (3, 3), (2,), (4, 4))]


def grads(step: int) -> list[np.ndarray]:
    g = np.random.default_rng(100 + step)
    return [g.standard_normal(shape).astype(np.float32) for shape in ((6, 5), (7,), (3, 3), (2,), (4, 4))]


def main() -> None:
    dist.init_process_group(sys.argv[1] if len(sys.argv) > 1 else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    ours, ref = model(), model()
    zero = ZeroRedundancyOptimizer(ours, optimizer_class=mt.optim.AdamW, lr=0.1, weight_decay=0.01)
    plain = mt.optim.AdamW(ref, lr=0.1, weight_decay=0.01)
    # PyTorch's split, largest first to the emptiest rank: 30, 2 | 16, 9, 7 on two ranks
    shard = [p.numel() for p in zero.optim.param_groups[0]["params"]]
    assert shard == ([30, 2] if rank == 0 else [16, 9, 7]) if world == 2 else [30, 16, 9, 7, 2], shard
    for step in range(3):
        if step == 2:
            zero.param_groups[0]["lr"] = plain.param_groups[0]["lr"] = 0.02  # as a scheduler sets it
        for params in (ours, ref):
            for p, g in zip(params, grads(step)):
                p.grad = mt.tensor(g)
        zero.step()
        plain.step()
        for p, q in zip(ours, ref):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert zero.optim.param_groups[0]["lr"] == 0.02
    assert len(zero.optim.state) == len(shard)  # the state of this rank's shard only
    extra = mt.zeros(40, requires_grad=True)  # 32 elements each so far: the tie goes to rank 0
    zero.add_param_group({"params": [extra], "lr": 0.5})
    assert len(zero.param_groups) == 2
    mine = [p for g in zero.optim.param_groups[1:] for p in g["params"]]
    assert mine == ([extra] if rank == 0 else []) if world == 2 else [extra], [p.numel() for p in mine]
    print(f"ok {rank}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
