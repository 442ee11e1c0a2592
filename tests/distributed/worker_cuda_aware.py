"""A CUDA-aware MPI check, run by benchmarks/gpu_check.sh (issue #17) under ``mpiexec -n 2`` with
MINITENSOR_CUDA_AWARE_MPI=1: both ranks on the one GPU (MPI, unlike NCCL, lets two ranks share a device).
Each rank all-reduces and broadcasts CUDA tensors through the MPI engine, which hands MPI the device
memory, and prints ``ok <rank>`` when the results are exact, else what came back. An MPI that is not
CUDA-aware (MPICH's wheel) crashes here or returns wrong numbers: that is what the check finds out."""
from __future__ import annotations

import sys

import numpy as np

import minitensor as mt
import minitensor.distributed as dist


def main() -> int:
    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    x = mt.arange(1024, dtype=mt.float32, device="cuda") * (rank + 1)
    dist.all_reduce(x)  # sum over ranks of (r + 1) * i = i * n (n + 1) / 2: exact in float32 here
    expected = np.arange(1024, dtype=np.float32) * (n * (n + 1) // 2)
    y = mt.full((4,), float(rank), device="cuda")
    dist.broadcast(y, src=n - 1)
    wrong = [name for name, got, want in (("all_reduce", x.cpu().numpy(), expected),
                                          ("broadcast", y.cpu().numpy(), np.full(4, n - 1, np.float32)))
             if not np.array_equal(got, want)]
    print(f"WRONG {rank}: {', '.join(wrong)}" if wrong else f"ok {rank}", flush=True)
    dist.destroy_process_group()
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
