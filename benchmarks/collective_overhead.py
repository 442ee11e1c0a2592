"""The per-call cost of minitensor's blocking collectives on small tensors, 2 ranks on this machine, and
mpi4py's own ``Iallreduce`` + wait on the same buffer as the floor (docs/distributed.md, "Checking that the
ranks agree").

    python benchmarks/collective_overhead.py [--calls 2000] [--rounds 5] [--ranks 2]

Each round times ``calls`` back-to-back ``all_reduce`` of a 4-element float32 tensor (and of 1.7 MB, the CNN's
gradients) with the cross-rank signature check (checks.py) off and on, the cases taking turns; the medians of
the rounds' per-call times are printed by rank 0, with the load average (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent


def interleaved(cases: list[tuple[str, Callable[[], None], int, bool]], rounds: int, check: Any) -> dict[str, float]:
    """Median over ``rounds`` of the seconds per call of each case (name, fn, calls, signature check on),
    the cases taking turns within each round, so that a change of the machine's load hits them alike."""
    times: dict[str, list[float]] = {name: [] for name, *_ in cases}
    for _ in range(rounds):
        for name, fn, calls, on in cases:
            check(on)
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - start) / calls)
    check(True)
    return {name: statistics.median(t) for name, t in times.items()}


def worker(args: argparse.Namespace) -> None:
    import numpy as np
    from mpi4py import MPI

    import minitensor as mt
    import minitensor.distributed as dist

    dist.init_process_group("mpi")
    world = dist.group.WORLD
    assert world is not None
    on_by_default = world.gate.on

    def check(on: bool) -> None:  # every rank switches at the same call: the queue is empty between rounds
        world.gate.on = on and on_by_default

    small, large = mt.ones(4), mt.ones(425_000)
    raw = np.ones(4, dtype=np.float32)
    comm = MPI.COMM_WORLD

    def mpi_raw() -> None:
        request = comm.Iallreduce(MPI.IN_PLACE, [raw, MPI.FLOAT], MPI.SUM)
        while not request.Test():
            pass

    n, big = args.calls, max(args.calls // 20, 10)
    cases = [("mpi4py Iallreduce, 4 floats", mpi_raw, n, False),
             ("all_reduce, 4 floats, check off", lambda: dist.all_reduce(small), n, False),
             ("all_reduce, 4 floats, check on", lambda: dist.all_reduce(small), n, True),
             ("all_reduce, 1.7 MB, check off", lambda: dist.all_reduce(large), big, False),
             ("all_reduce, 1.7 MB, check on", lambda: dist.all_reduce(large), big, True)]
    interleaved(cases, 1, check)  # warm-up
    dist.barrier()
    results = interleaved(cases, args.rounds, check)
    if dist.get_rank() == 0:
        print(f"load average {os.getloadavg()[0]:.2f} (check on by default: {on_by_default})")
        for name, seconds in results.items():
            print(f"{name:34s} {seconds * 1e6:8.1f} us per call")
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=11)
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
