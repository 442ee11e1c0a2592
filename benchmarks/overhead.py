"""Framework overhead per op: a chain of 100 small elementwise ops, forward and backward, in minitensor and
as the same NumPy calls written by hand; overhead = (minitensor - numpy) / ops.

    python benchmarks/overhead.py [--size 64] [--repeats 200] [--profile] [--json]

``--profile`` times the minitensor chain while a ``minitensor.profiler.profile`` records every op (the
profiler's cost per op when on); ``benchmarks/profiler_overhead.py`` compares this tree with another
checkout (the cost of the profiler's hook when off).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time

import numpy as np

import minitensor as mt

N_BLOCKS = 25  # 4 ops a block: mul(w), add(b), tanh, mul(0.5) -> 100 ops
OPS = 4 * N_BLOCKS


def chain_minitensor(x: mt.Tensor, w: mt.Tensor, b: mt.Tensor) -> None:
    y = x
    for _ in range(N_BLOCKS):
        y = (y * w + b).tanh() * 0.5
    y.sum().backward()


def chain_numpy(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same forward calls and the backward calls autograd makes, with intermediates kept by hand."""
    saved = []
    y = x
    for _ in range(N_BLOCKS):
        u = y * w
        v = u + b
        t = np.tanh(v)
        saved.append((y, t))
        y = t * 0.5
    y.sum()
    g = np.ones_like(y)
    gx = gw = gb = None
    for y_in, t in reversed(saved):
        g = g * 0.5
        g = g * (1 - t * t)
        gb = g if gb is None else gb + g
        gw_k = g * y_in
        gw = gw_k if gw is None else gw + gw_k
        g = g * w
    gx = g
    return gx, gw, gb


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def make_inputs(size: int) -> tuple[tuple[mt.Tensor, ...], tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(0)
    arrays = tuple(rng.standard_normal(size).astype(np.float32) for _ in range(3))
    tensors = tuple(mt.tensor(a, requires_grad=True) for a in arrays)
    return tensors, arrays


def measure(size: int = 64, repeats: int = 200, profile: bool = False) -> dict[str, float]:
    """Median seconds per chain for both, interleaved so machine drift hits both alike; ``profile``: the
    minitensor chains run while a CPU profile records."""
    tensors, arrays = make_inputs(size)
    recording = contextlib.nullcontext()
    if profile:
        from minitensor.profiler import ProfilerActivity, profile as Profile
        recording = Profile(activities=[ProfilerActivity.CPU])  # type: ignore[assignment]

    def run_mt() -> None:
        for t in tensors:
            t.grad = None
        chain_minitensor(*tensors)

    mt_times, np_times = [], []
    with recording:
        for _ in range(repeats):
            mt_times.append(_median_seconds(run_mt, 1))
            np_times.append(_median_seconds(lambda: chain_numpy(*arrays), 1))
    t_mt, t_np = statistics.median(mt_times), statistics.median(np_times)
    return {"minitensor_s": t_mt, "numpy_s": t_np, "overhead_us_per_op": (t_mt - t_np) / OPS * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=64, help="elements per tensor (default 64)")
    parser.add_argument("--repeats", type=int, default=200, help="chains timed for each (default 200)")
    parser.add_argument("--profile", action="store_true", help="time minitensor while a profiler records")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    r = measure(args.size, args.repeats, args.profile)
    if args.json:
        print(json.dumps(r))
        return
    print(f"chain of {OPS} ops on {args.size} float32 elements, forward + backward, median of {args.repeats}:")
    print(f"  minitensor {r['minitensor_s'] * 1e3:.3f} ms   numpy by hand {r['numpy_s'] * 1e3:.3f} ms")
    print(f"  framework overhead: {r['overhead_us_per_op']:.2f} us per op")


if __name__ == "__main__":
    main()
