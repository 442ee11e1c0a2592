"""Where a workload's GEMM time goes: every matrix product of its training step, by operand shapes and strides,
timed inside the step and alone (the same strides), and alone again with both operands C-contiguous (what a
product would cost if the transposed operand were laid out for it; the copy that would take is not counted),
and with ``--torch`` the same product (same strides) through PyTorch's ``torch.matmul`` on as many threads.

    python benchmarks/step_gemms.py gan --steps 50 --torch

One process, the BLAS on ``--threads`` threads; each product timed by wrapping the backends' ``matmul`` (the
one place a GEMM is issued: Linear, its gradients, attention, the LSTM's input projections). The LSTM's
recurrence calls NumPy directly (``cpu/recurrent.py``) and is not listed. Times are medians in microseconds.
"""
from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
import timeit
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from benchmarks import workloads  # noqa: E402
from minitensor.backends import get_backend  # noqa: E402
from minitensor.backends.cpu.linalg import CpuLinalgOps, in_float32  # noqa: E402
from minitensor.backends.generic.linalg import LinalgOps  # noqa: E402

Key = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], np.dtype]


def record_step_products(name: str, steps: int) -> dict[Key, list[float]]:
    """Seconds of each product call in ``steps`` training steps (after 5 warm-up steps), by operand layout."""
    w = workloads.build(name, "cpu")
    for _ in range(5):
        w.step()
    seen: dict[Key, list[float]] = collections.defaultdict(list)
    plain = LinalgOps.matmul

    def timed(self: Any, a: Any, b: Any) -> Any:
        start = time.perf_counter()
        out = plain(self, a, b)
        seen[(a.shape, a.strides, b.shape, b.strides, a.dtype)].append(time.perf_counter() - start)
        return out

    CpuLinalgOps.matmul = in_float32(timed)
    try:
        for _ in range(steps):
            w.step()
    finally:
        CpuLinalgOps.matmul = in_float32(plain)
    return seen


def alone(a: Any, b: Any, product: Callable[[Any, Any], Any] | None = None, repeats: int = 7) -> float:
    """Seconds per ``product(a, b)`` (default: the CPU backend's matmul), best of ``repeats`` blocks."""
    product = product or get_backend("cpu").matmul
    start = time.perf_counter()
    product(a, b)
    number = max(1, int(2e-2 / max(time.perf_counter() - start, 1e-7)))
    return min(timeit.repeat(lambda: product(a, b), number=number, repeat=repeats)) / number


def torch_product(threads: int) -> Callable[[np.ndarray, np.ndarray], float]:
    """Seconds per ``torch.matmul`` of the two arrays as tensors over the same memory (PyTorch on
    ``threads`` threads)."""
    import torch
    torch.set_num_threads(threads)
    return lambda a, b: alone(torch.from_numpy(a), torch.from_numpy(b), torch.matmul)


def operands(shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Random data viewed with the recorded shape and strides (a transposed operand stays transposed)."""
    order = np.argsort(strides)[::-1]  # the dims from the largest stride down: the buffer's C layout
    base = np.random.default_rng(0).standard_normal([shape[i] for i in order]).astype(dtype)
    return base.transpose(np.argsort(order))


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload", choices=[w for w in workloads.BATCH_SIZES])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--torch", action="store_true", help="also time each product through PyTorch")
    args = p.parse_args(argv)
    through_torch = torch_product(args.threads) if args.torch else None
    with threadpool_limits(args.threads):
        seen = record_step_products(args.workload, args.steps)
        print(f"{args.workload}: {args.steps} steps, {args.threads} BLAS threads; us per product (median)")
        print(f"{'a shape':>16} {'a strides':>14} {'b shape':>16} {'b strides':>14} {'/step':>5} "
              f"{'in step':>8} {'alone':>8} {'C-contig':>8}" + (f" {'PyTorch':>8}" if through_torch else ""))
        total = 0.0
        for (sa, st_a, sb, st_b, dt), times in sorted(seen.items(), key=lambda kv: -sum(kv[1])):
            a, b = operands(sa, st_a, dt), operands(sb, st_b, dt)
            total += sum(times) / args.steps
            print(f"{str(sa):>16} {str(st_a):>14} {str(sb):>16} {str(st_b):>14} {len(times) // args.steps:>5} "
                  f"{statistics.median(times) * 1e6:8.1f} {alone(a, b) * 1e6:8.1f} "
                  f"{alone(np.ascontiguousarray(a), np.ascontiguousarray(b)) * 1e6:8.1f}"
                  + (f" {through_torch(a, b) * 1e6:8.1f}" if through_torch else ""))
        print(f"products per step: {total * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
