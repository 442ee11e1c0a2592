"""A rank that fails, under mpiexec -n 2 (test_mpi.py). ``mode``:

- ``hang``: rank 1 sleeps; rank 0's all_reduce times out (2 s): it checks the error, that the group refuses
  work afterwards, and dies of the error, which ends the job (rank 1 never wakes up on its own in time);
- ``raise``: rank 1 dies of an uncaught exception before the all_reduce; rank 0 (timeout 10 min) must not wait;
- ``exit``: rank 1's process ends abruptly (os._exit) before the all_reduce;
- ``exit0``: the same with status 0 (run under ``mpiexec -disable-auto-cleanup``: rank 0 must see it end);
- ``return``: rank 1 leaves its main program (status 0) while rank 0 is still to call the all_reduce;
- ``return-late``: the same while rank 0 is already inside the all_reduce;
- ``late``: rank 1 never calls init_process_group; rank 0's times out (2 s) and ends the job.
"""
from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

import minitensor as mt
import minitensor.distributed as dist

mode = sys.argv[1]
# What a rank caught is also written to a file of this folder: mpiexec may end the job before it forwards the
# last lines a rank printed just before MPI_Abort.
report_dir = sys.argv[2] if len(sys.argv) > 2 else None


def say(rank: int, line: str) -> None:
    print(line, flush=True)
    if report_dir is not None:
        with open(os.path.join(report_dir, f"rank{rank}.txt"), "a") as f:
            f.write(line + "\n")


if mode == "late":  # rank 1 never joins: rank 0's init_process_group times out
    from mpi4py import MPI
    if MPI.COMM_WORLD.Get_rank() == 1:
        time.sleep(600)
    try:
        dist.init_process_group("mpi", timeout=timedelta(seconds=2))
    except dist.DistBackendError as e:
        say(0, f"caught on rank 0: {e}")
        assert not dist.is_initialized()
        raise
dist.init_process_group("mpi", timeout=timedelta(seconds=2) if mode == "hang" else timedelta(minutes=10))
rank = dist.get_rank()
if rank == 1:
    if mode == "hang":
        time.sleep(600)
    if mode == "raise":
        raise RuntimeError("rank 1 fails on purpose")
    if mode == "exit":
        os._exit(3)
    if mode == "exit0":
        os._exit(0)
    if mode == "return":
        sys.exit(0)
    if mode == "return-late":
        time.sleep(1)
        sys.exit(0)
if mode in ("exit0", "return"):
    time.sleep(1)  # rank 1 is gone (or at its exit) before rank 0 calls the collective
t = mt.ones(4)
try:
    dist.all_reduce(t)
except dist.DistError as e:  # DistBackendError (a timeout, a rank gone), or the mismatch with a leaving rank
    say(rank, f"caught on rank {rank}: {e}")
    if isinstance(e, dist.DistBackendError):
        try:
            dist.all_reduce(t)
        except dist.DistBackendError as again:
            say(rank, f"then: {again}")
    raise
print(f"rank {rank} was not stopped", flush=True)
