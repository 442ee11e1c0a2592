"""Where a workload's training step goes, op by op: every call into the CPU backend, timed inside the step
while the workload trains (no profiler, whose hooks cost per op), summed per backend method, beside the
step's own time; the gap between the two is the framework's Python (autograd, modules, optimizer loops).

    python benchmarks/step_ops.py gpt --steps 20
    python benchmarks/step_ops.py lstm --isa avx2 --top 8        # AVX2's kernels on an AVX-512 machine

One process (re-started under ``--isa``'s environment, which OpenBLAS and Numba read when loaded), the BLAS
on ``--threads`` threads. A backend method called from another one is counted in its caller's time only.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from benchmarks import isa  # noqa: E402

_RESTARTED = "MINITENSOR_STEP_OPS_ISA_SET"


@contextlib.contextmanager
def timed_methods(cls: type, seconds: dict[str, float], calls: collections.Counter) -> Iterator[None]:
    """Inside: every public method of ``cls`` adds the wall time of its outermost calls to ``seconds``; the
    methods are restored on exit."""
    depth = [0]

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return method(*args, **kwargs)
            depth[0] += 1
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                seconds[name] += time.perf_counter() - start
                calls[name] += 1
                depth[0] -= 1
        return timed

    own = {name: cls.__dict__[name] for name in dir(cls) if name in cls.__dict__}
    public = [name for name in dir(cls) if not name.startswith("_") and callable(getattr(cls, name))
              and not isinstance(getattr(cls, name), type)]
    try:
        for name in public:
            setattr(cls, name, wrap(name, getattr(cls, name)))
        yield
    finally:
        for name in public:
            if name in own:
                setattr(cls, name, own[name])
            else:
                delattr(cls, name)  # inherited: the base class's method shows through again


def measure(name: str, steps: int, threads: int) -> tuple[float, dict[str, float], collections.Counter]:
    """(ms per step, seconds per backend method over ``steps`` steps, calls per method) after 3 warm-up steps."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    from benchmarks import workloads
    from minitensor.backends.cpu.backend import NumpyBackend

    seconds: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter = collections.Counter()
    w = workloads.build(name, "cpu")
    with threadpool_limits(threads), timed_methods(NumpyBackend, seconds, calls):
        for _ in range(3):
            w.step()
        seconds.clear()
        calls.clear()
        start = time.perf_counter()
        for _ in range(steps):
            w.step()
        step_ms = (time.perf_counter() - start) / steps * 1e3
    return step_ms, seconds, calls


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=15, help="the backend methods with the most time")
    p.add_argument("--isa", default=None, choices=isa.ISAS)
    args = p.parse_args(argv)
    if args.isa is not None and not os.environ.get(_RESTARTED):
        with isa.scoped_environ({**isa.environment(args.isa), _RESTARTED: "1"}):
            raise SystemExit(subprocess.call([sys.executable, __file__, *sys.argv[1:]]))
    step_ms, seconds, calls = measure(args.workload, args.steps, args.threads)
    total_ms = sum(seconds.values()) / args.steps * 1e3
    print(f"{args.workload}: {step_ms:.2f} ms a step, {total_ms:.2f} in the backend's calls "
          f"({args.steps} steps, {args.threads} BLAS threads, isa {args.isa or 'as the environment'})")
    print(f"{'backend method':32s} {'ms/step':>8s} {'calls/step':>10s} {'us/call':>8s}")
    for method, s in sorted(seconds.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{method:32s} {s / args.steps * 1e3:8.3f} {calls[method] / args.steps:10.1f} "
              f"{s / calls[method] * 1e6:8.1f}")


if __name__ == "__main__":
    main()
