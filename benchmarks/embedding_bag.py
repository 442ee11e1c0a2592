"""F.embedding_bag forward + backward (weight's gradient) against PyTorch's CPU kernel, float32.

    PYTHONPATH=$PWD python benchmarks/embedding_bag.py [--repeats 7] [--torch-threads 1]

Cases: weight (50000, 64); a 2-D input (256, 20); a 1-D input of N=100000 indices cut at 1000 offsets;
each mode. Prints the median milliseconds of ``--repeats`` timed runs (after one warm-up) for both.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np


def median_ms(step: Callable[[], Any], repeats: int) -> float:
    step()  # warm-up (Numba compiles, caches fill)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--torch-threads", type=int, default=1)
    args = parser.parse_args()
    import minitensor as mt
    import minitensor.nn.functional as F
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((50000, 64)).astype(np.float32)
    inputs = {"2-D (256, 20)": (rng.integers(0, 50000, (256, 20)), None),
              "1-D N=100000, 1000 bags": (rng.integers(0, 50000, 100000), np.arange(0, 100000, 100))}
    try:
        import torch
        torch.set_num_threads(args.torch_threads)
    except ImportError:
        torch = None
    print(f"{'input':26s} {'mode':5s} {'minitensor ms':>14s} {'torch ms':>9s} {'ratio':>6s}")
    for label, (idx, offsets) in inputs.items():
        for mode in ("sum", "mean", "max"):
            w = mt.tensor(weight, requires_grad=True)
            i, o = mt.tensor(idx), None if offsets is None else mt.tensor(offsets)

            def ours() -> None:
                w.grad = None
                F.embedding_bag(i, w, o, mode=mode).sum().backward()
            ms = median_ms(ours, args.repeats)
            ref = float("nan")
            if torch is not None:
                tw = torch.tensor(weight, requires_grad=True)
                ti, to = torch.tensor(idx), None if offsets is None else torch.tensor(offsets)

                def theirs() -> None:
                    tw.grad = None
                    torch.nn.functional.embedding_bag(ti, tw, to, mode=mode).sum().backward()
                ref = median_ms(theirs, args.repeats)
            print(f"{label:26s} {mode:5s} {ms:14.2f} {ref:9.2f} {ms / ref:6.1f}")


if __name__ == "__main__":
    main()
