"""A/B of one workload's training step between source trees or environments, each timed alone in fresh
processes, the variants alternated round by round (this machine is shared and noisy: compare the medians).

    python benchmarks/step_ab.py lstm --tree ../old-checkout --tree .           # code: before / after
    python benchmarks/step_ab.py cnn --env OPENBLAS_THREAD_TIMEOUT=28 --env OPENBLAS_THREAD_TIMEOUT=20
    python benchmarks/step_ab.py gpt --isa avx2 --tree ../old-checkout --tree . --rounds 4

A process builds the workload (``workloads.build``), runs ``--warmup`` steps, holds the BLAS to
``--threads``, then times ``--chunks`` chunks of ``--steps`` steps and reports the median ms per step; the
ratio is each variant's median over the first variant's. ``--isa`` sets the workers' environment as
compare.py's does (``isa.environment``).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from benchmarks import isa  # noqa: E402

WORKER = """
import statistics, sys, time
import minitensor
from benchmarks import workloads
from threadpoolctl import threadpool_limits
name, warmup, threads, chunks, steps = sys.argv[1], *map(int, sys.argv[2:6])
w = workloads.build(name, "cpu", 0)
for _ in range(warmup):
    w.step()
limiter = threadpool_limits(threads)
times = []
for _ in range(chunks):
    start = time.perf_counter()
    for _ in range(steps):
        w.step()
    times.append((time.perf_counter() - start) / steps * 1e3)
print(statistics.median(times))
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload")
    p.add_argument("--tree", action="append", default=[], help="a source tree to run (repeatable)")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="an environment variant (repeatable; with --tree, each tree runs each variant)")
    p.add_argument("--isa", default=None, choices=isa.ISAS)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--chunks", type=int, default=5)
    p.add_argument("--steps", type=int, default=4)
    return p.parse_args(argv)


def variants(args: argparse.Namespace) -> list[tuple[str, Path, dict[str, str]]]:
    """(label, tree, environment changes) for every tree x environment variant."""
    trees = [Path(t).resolve() for t in args.tree] or [ROOT]
    envs = [dict([e.split("=", 1)]) for e in args.env] or [{}]
    return [(f"{tree.name}{' ' + ' '.join(f'{k}={v}' for k, v in env.items()) if env else ''}", tree, env)
            for tree in trees for env in envs]


def run(tree: Path, env: dict[str, str], args: argparse.Namespace) -> float:
    environ = dict(os.environ)
    for key, value in {**isa.environment(args.isa), **env}.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    environ["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", WORKER, args.workload, str(args.warmup), str(args.threads),
                          str(args.chunks), str(args.steps)], cwd=tree, env=environ, capture_output=True,
                         text=True)
    if out.returncode:
        raise SystemExit(f"{tree}: the worker failed:\n{out.stderr[-3000:]}")
    return float(out.stdout.split()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    runs = variants(args)
    samples: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    for _ in range(args.rounds):
        for label, tree, env in runs:
            samples[label].append(run(tree, env, args))
    first = statistics.median(samples[runs[0][0]])
    for label, values in samples.items():
        median = statistics.median(values)
        print(f"{args.workload:6s} {label:50s} {median:8.2f} ms/step  x{median / first:.3f}   "
              f"({', '.join(f'{v:.1f}' for v in values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
