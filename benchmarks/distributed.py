"""Data parallelism on one machine: the CNN's training throughput on 1 rank x 2 threads against 2 ranks x 1
thread (``mpiexec -n 2``, DistributedDataParallel), the same global batch of 64 (32 per rank), and where the
all-reduce time goes (1 rank x 1 thread as the baseline of both).

    python benchmarks/distributed.py [--steps 20] [--rounds 5] [--json out.json]

Per DDP step it measures the time spent launching the buckets' all-reduces during backward (``async_op``
launches: MPI may do part of the work there) and waiting for them at the end of backward (the exposed
communication), and, separately, the same buckets all-reduced back to back outside backward (the
communication's whole cost). What the end-of-backward wait does not show of that cost ran while backward was
still computing: overlapped = max(0, whole - launch - wait); and the share of the gradient bytes whose
reduction had already finished when backward ended. Medians over the rounds; the machine is shared, so the
load average is printed with the results.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GLOBAL_BATCH = 64


def worker(args: argparse.Namespace) -> None:
    """One rank (or the single process): train the CNN and print one JSON line of timings (rank 0)."""
    sys.path.insert(0, str(HERE.parent / "examples"))
    import minitensor as mt
    from common import classifier_step
    from models import cnn

    mt.set_num_threads(args.threads)
    world, rank, dist, ddp = 1, 0, None, None
    if args.ranks > 1:
        import minitensor.distributed as dist
        dist.init_process_group("mpi")
        world, rank = dist.get_world_size(), dist.get_rank()
    mt.manual_seed(0)
    model = cnn(28)
    batch = GLOBAL_BATCH // world
    x, y = mt.randn(batch, 1, 28, 28), mt.randint(0, 10, (batch,))
    timers = {"launch": 0.0, "wait": 0.0, "done_bytes": 0.0, "all_bytes": 0.0}
    if dist is not None:
        ddp = mt.nn.parallel.DistributedDataParallel(model)
        _instrument(ddp._reducer, timers)
    step = classifier_step(ddp or model, mt.optim.Adam(model.parameters()))
    for _ in range(3):
        step(x, y)
    rounds = []
    for _ in range(args.rounds):
        timers.update(launch=0.0, wait=0.0, done_bytes=0.0, all_bytes=0.0)
        if dist is not None:
            dist.barrier()
        start = time.perf_counter()
        for _ in range(args.steps):
            step(x, y)
        seconds = time.perf_counter() - start
        rounds.append({"s_per_step": seconds / args.steps, "launch_ms": 1e3 * timers["launch"] / args.steps,
                       "wait_ms": 1e3 * timers["wait"] / args.steps,
                       "done_at_end": timers["done_bytes"] / max(timers["all_bytes"], 1.0)})
    result: dict[str, Any] = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    result["samples_per_s"] = GLOBAL_BATCH / result["s_per_step"]
    if ddp is not None:
        result["allreduce_ms"] = _blocking_allreduce_ms(ddp._reducer, dist, args.steps)
        result["buckets"] = [len(b) for b in ddp._reducer.buckets]
        result["overlapped_ms"] = max(0.0, result["allreduce_ms"] - result["launch_ms"] - result["wait_ms"])
        dist.destroy_process_group()
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


def _instrument(reducer: Any, timers: dict[str, float]) -> None:
    """Time the reducer's all-reduce launches and its end-of-backward finalize (waits and write-back)."""
    dist, finalize = reducer.dist, reducer.finalize

    class Timed:
        def __getattr__(self, name: str) -> Any:
            return getattr(dist, name)

        def all_reduce(self, *a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return dist.all_reduce(*a, **k)
            finally:
                timers["launch"] += time.perf_counter() - start

    def timed_finalize() -> None:
        start = time.perf_counter()
        done = [w.done() for w in reducer.works]  # launched buckets already reduced when backward ends
        timers["done_bytes"] += sum(f.numel() * f.element_size() for f, d in zip(reducer.flat, done) if d)
        timers["all_bytes"] += sum(f.numel() * f.element_size() for f in reducer.flat)
        finalize()
        timers["wait"] += time.perf_counter() - start

    reducer.dist, reducer.finalize = Timed(), timed_finalize


def _blocking_allreduce_ms(reducer: Any, dist: Any, repeats: int) -> float:
    """The buckets all-reduced one after the other, blocking, outside backward: ms per step."""
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        for flat in reducer.flat:
            dist.all_reduce(flat)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def launch(args: argparse.Namespace) -> dict[str, Any]:
    """Run the two configurations as subprocesses and collect their RESULT lines."""
    mpiexec = Path(sys.executable).parent / "mpiexec"
    me = [sys.executable, str(Path(__file__).resolve()), "--worker", "--steps", str(args.steps),
          "--rounds", str(args.rounds)]
    configs = {"1 rank x 1 thread": ([], me + ["--ranks", "1", "--threads", "1"], 1),
               "1 rank x 2 threads": ([], me + ["--ranks", "1", "--threads", "2"], 2),
               "2 ranks x 1 thread": ([str(mpiexec), "-n", "2"], me + ["--ranks", "2", "--threads", "1"], 1)}
    results = {}
    for name, (prefix, cmd, threads) in configs.items():
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   NUMBA_NUM_THREADS=str(threads), PYTHONPATH=str(HERE.parent))
        proc = subprocess.run(prefix + cmd, env=env, capture_output=True, text=True, timeout=1200)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if proc.returncode or not lines:
            raise SystemExit(f"{name} failed:\n{proc.stdout}\n{proc.stderr}")
        results[name] = json.loads(lines[-1][len("RESULT "):])
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=20, help="steps per round (default: 20)")
    p.add_argument("--rounds", type=int, default=5, help="rounds; medians are reported (default: 5)")
    p.add_argument("--json", default=None, help="also write the results here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--ranks", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=2, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
        return
    load = os.getloadavg()
    results = launch(args)
    print(f"CNN, global batch {GLOBAL_BATCH}, {args.rounds} rounds x {args.steps} steps (medians); load average "
          f"{load[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("| configuration | ms/step | samples/s | all-reduce ms/step (blocking) | launch ms | end wait ms | "
          "overlapped ms | bytes reduced before backward ended |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r in results.items():
        keys = ("allreduce_ms", "launch_ms", "wait_ms", "overlapped_ms")
        comm = [f"{r[k]:.2f}" for k in keys] + [f"{r['done_at_end']:.0%}"] if "allreduce_ms" in r else ["-"] * 5
        print(f"| {name} | {1e3 * r['s_per_step']:.2f} | {r['samples_per_s']:.0f} | " + " | ".join(comm) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": load, "results": results}, indent=2))


if __name__ == "__main__":
    main()
