"""The per-call cost of minitensor's blocking collectives on small tensors, 2 ranks on this machine, and
mpi4py's own ``Iallreduce`` + wait on the same buffer as the floor (docs/distributed.md, "Checking that the
ranks agree").

    python benchmarks/collective_overhead.py [--calls 2000] [--rounds 5] [--ranks 2]

Each round times ``calls`` back-to-back ``all_reduce`` of a 4-element float32 tensor (and of 1.7 MB, the CNN's
gradients), after a warm-up; the median of the rounds' per-call times is printed by rank 0, with the load
average (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def per_call(fn: object, calls: int, rounds: int) -> float:
    """Median over ``rounds`` of the mean seconds per call of ``fn()`` (``calls`` calls each)."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def worker(args: argparse.Namespace) -> None:
    import numpy as np
    from mpi4py import MPI

    import minitensor as mt
    import minitensor.distributed as dist

    dist.init_process_group("mpi")
    small, large = mt.ones(4), mt.ones(425_000)
    raw = np.ones(4, dtype=np.float32)
    comm = MPI.COMM_WORLD

    def mpi_raw() -> None:
        request = comm.Iallreduce(MPI.IN_PLACE, [raw, MPI.FLOAT], MPI.SUM)
        while not request.Test():
            pass

    results = {}
    for name, fn, calls in [("mpi4py Iallreduce, 4 floats", mpi_raw, args.calls),
                            ("all_reduce, 4 floats", lambda: dist.all_reduce(small), args.calls),
                            ("all_reduce, 1.7 MB", lambda: dist.all_reduce(large), max(args.calls // 20, 10))]:
        per_call(fn, calls // 10, 1)  # warm-up
        dist.barrier()
        results[name] = per_call(fn, calls, args.rounds)
    if dist.get_rank() == 0:
        print(f"load average {os.getloadavg()[0]:.2f}")
        for name, seconds in results.items():
            print(f"{name:32s} {seconds * 1e6:8.1f} us per call")
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    mpiexec = Path(sys.executable).parent / "mpiexec"
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    command = [str(mpiexec), "-n", str(args.ranks), sys.executable, __file__, "--worker",
               "--calls", str(args.calls), "--rounds", str(args.rounds)]
    subprocess.run(command, check=True, env=env)


if __name__ == "__main__":
    main()
