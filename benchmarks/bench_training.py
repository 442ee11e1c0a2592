"""asv benchmarks of one training step of the workloads (``workloads.py``: MLP-S, MLP-L, CNN, GAN, Transformer) on
each device, with the GPU's speedup over the CPU and the peak memory of a step as ``track_`` figures.

A CUDA benchmark skips itself (NotImplementedError in setup) where no GPU is usable; timed calls on a GPU
end with a device synchronisation.
"""
from __future__ import annotations

import statistics
import tracemalloc

import minitensor as mt

from .compare import auto_steps
from .compare_worker import seconds_per_step
from .workloads import DEVICES, WORKLOADS, Workload, build, require_device

MIB = 2 ** 20
SPEEDUP_CHUNKS = 5  # timed chunks per device for the speedup; the median chunk counts


class TrainingStep:
    """One training step (forward, loss, backward, optimizer update) on the workload's fixed batch."""

    params = [list(WORKLOADS), list(DEVICES)]
    param_names = ["workload", "device"]

    def setup(self, workload: str, device: str) -> None:
        require_device(device)
        self.run = warm(build(workload, device))

    def time_training_step(self, workload: str, device: str) -> None:
        self.run.step()
        self.run.synchronize()


class PeakMemory:
    """Peak memory of one training step, everything live included (weights, gradients, optimizer state,
    batch, activations and temporaries).

    - cpu: tracemalloc's peak over the step, tracing from before the build. NumPy reports its array
      buffers to tracemalloc, so this is minitensor's arrays plus Python's objects; memory the BLAS keeps
      for itself is not in it.
    - cuda: ``mt.cuda.max_memory_allocated()`` over the step after ``reset_peak_memory_stats()``; a lower
      bound, exact where the peak is read (see docs/cuda.md).
    """

    params = [list(WORKLOADS), list(DEVICES)]
    param_names = ["workload", "device"]

    def setup(self, workload: str, device: str) -> None:
        require_device(device)

    def track_peak_memory(self, workload: str, device: str) -> float:
        peak = cuda_peak_bytes(workload) if device == "cuda" else tracemalloc_peak_bytes(workload)
        return peak / MIB

    track_peak_memory.unit = "MiB"  # type: ignore[attr-defined]


class GpuSpeedup:
    """CPU ms/step over CUDA ms/step for each workload, both measured in the same call (median of
    SPEEDUP_CHUNKS chunks each, chunks alternating between the devices)."""

    params = [list(WORKLOADS)]
    param_names = ["workload"]

    def setup(self, workload: str) -> None:
        require_device("cuda")
        self.runs = {device: warm(build(workload, device)) for device in DEVICES}

    def track_gpu_speedup(self, workload: str) -> float:
        steps = {d: auto_steps(seconds_per_step(r.step, r.synchronize, 1)) for d, r in self.runs.items()}
        chunks: dict[str, list[float]] = {d: [] for d in self.runs}
        for _ in range(SPEEDUP_CHUNKS):
            for d, r in self.runs.items():
                chunks[d].append(seconds_per_step(r.step, r.synchronize, steps[d]))
        return statistics.median(chunks["cpu"]) / statistics.median(chunks["cuda"])

    track_gpu_speedup.unit = "x"  # type: ignore[attr-defined]


def warm(run: Workload, steps: int = 2) -> Workload:
    """``run`` after ``steps`` steps: the optimizer state exists and the allocators have settled."""
    for _ in range(steps):
        run.step()
    run.synchronize()
    return run


def tracemalloc_peak_bytes(workload: str) -> int:
    """The peak of tracemalloc's traced bytes over one CPU training step of ``workload``, traced from before
    its build (so the weights, batch and optimizer state count)."""
    tracemalloc.start()
    try:
        run = warm(build(workload, "cpu"), steps=1)
        tracemalloc.reset_peak()
        run.step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def cuda_peak_bytes(workload: str) -> int:
    """``mt.cuda.max_memory_allocated()`` over one CUDA training step of ``workload``."""
    run = warm(build(workload, "cuda"), steps=1)
    mt.cuda.reset_peak_memory_stats()
    run.step()
    run.synchronize()
    return mt.cuda.max_memory_allocated()
