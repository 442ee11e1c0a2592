"""Peak memory of one call above what was live when it began: the measure of the activation-memory
benchmarks (``amp_memory.py``, ``bench_checkpoint.py``).

- cpu: tracemalloc's peak over the call less its traced bytes at the start. NumPy reports its array buffers
  to tracemalloc; what the BLAS keeps for itself is not in it. When tracing is off it is started for the call
  (then memory allocated before it and freed during it is not subtracted: start tracing before building the
  model where the call frees state it did not make).
- cuda: ``max_memory_allocated()`` over the call (after ``reset_peak_memory_stats()``) less
  ``memory_allocated()`` at the start; a lower bound, exact where the peak is read (see docs/cuda.md).
"""
from __future__ import annotations

import tracemalloc
from typing import Any, Callable

import minitensor as mt


def peak_above_start(call: Callable[[], Any], device: str | mt.device = "cpu") -> int:
    """Bytes: the peak of live memory during ``call()`` less what was live when it began."""
    if mt.device(device).type == "cuda":
        mt.cuda.synchronize()
        mt.cuda.reset_peak_memory_stats()
        base = mt.cuda.memory_allocated()
        call()
        mt.cuda.synchronize()
        return mt.cuda.max_memory_allocated() - base
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        if started:
            tracemalloc.stop()
