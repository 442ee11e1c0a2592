"""Winograd F(2x2, 3x3) against im2col for 3x3 stride-1 convolutions of N x C x H x H images (C channels in
and out), forward + backward, on the CPU: the measurements behind ``backends/cpu/conv.py``'s
``_enough_tiles`` rule. Prints each shape's median ms with Winograd forced on and off, and the rule's pick.

    python benchmarks/winograd_rule.py [--threads 2] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import minitensor as mt
import minitensor.backends.cpu.conv as cpu_conv

SHAPES = [(64, 32, 28), (64, 32, 14), (64, 64, 7), (64, 64, 8), (128, 16, 4), (16, 64, 8), (8, 32, 16),
          (1, 32, 28), (32, 512, 1), (8, 512, 7), (2, 512, 14), (8, 256, 14), (16, 256, 2), (32, 128, 7),
          (16, 128, 4), (8, 64, 7), (4, 64, 2), (1, 64, 14), (2, 64, 14), (4, 32, 28)]


def milliseconds(n: int, c: int, h: int, winograd: bool, repeats: int) -> float:
    """Median ms of conv2d(padding=1) forward + backward, Winograd allowed (by channels) or not."""
    x, w = mt.randn(n, c, h, h, requires_grad=True), mt.randn(c, c, 3, 3, requires_grad=True)
    saved, saved_rule = cpu_conv.WINOGRAD_MIN_CHANNELS, cpu_conv._enough_tiles
    cpu_conv.WINOGRAD_MIN_CHANNELS = saved if winograd else 10 ** 9
    cpu_conv._enough_tiles = lambda x, w: True  # measure both paths whatever the rule says
    try:
        times = []
        for i in range(repeats + 2):
            start = time.perf_counter()
            mt.nn.functional.conv2d(x, w, padding=1).sum().backward()
            if i >= 2:  # two warm-up runs (Numba's first call compiles or loads its cache)
                times.append(time.perf_counter() - start)
    finally:
        cpu_conv.WINOGRAD_MIN_CHANNELS, cpu_conv._enough_tiles = saved, saved_rule
    return statistics.median(times) * 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    mt.set_num_threads(args.threads)
    for n, c, h in SHAPES:
        wino, im2col = milliseconds(n, c, h, True, args.repeats), milliseconds(n, c, h, False, args.repeats)
        picks = "winograd" if cpu_conv._enough_tiles(mt.empty(n, c, h, h).array, mt.empty(c, c, 3, 3).array) \
            else "im2col"
        print(f"N={n:4d} C={c:4d} H={h:3d}  winograd {wino:8.2f} ms  im2col {im2col:8.2f} ms  "
              f"ratio {wino / im2col:5.2f}  rule: {picks}")


if __name__ == "__main__":
    main()
