"""asv benchmarks of the core: framework overhead on a chain of small ops (forward + backward)."""
from __future__ import annotations

from .overhead import chain_minitensor, chain_numpy, make_inputs, measure


class OverheadChain:
    """100 elementwise ops on small tensors: dominated by per-op Python cost, not arithmetic."""

    params = [64, 4096]
    param_names = ["size"]

    def setup(self, size: int) -> None:
        self.tensors, self.arrays = make_inputs(size)

    def time_minitensor_forward_backward(self, size: int) -> None:
        for t in self.tensors:
            t.grad = None
        chain_minitensor(*self.tensors)

    def time_numpy_same_calls(self, size: int) -> None:
        chain_numpy(*self.arrays)

    def track_overhead_us_per_op(self, size: int) -> float:
        """(minitensor - numpy) / ops, both timed in one interleaved run (this machine is noisy)."""
        return measure(size, repeats=100)["overhead_us_per_op"]

    track_overhead_us_per_op.unit = "us/op"  # type: ignore[attr-defined]

    def track_profiled_overhead_us_per_op(self, size: int) -> float:
        """The same while a minitensor.profiler profile records every op (the profiler's cost when on; its
        cost when off is track_overhead_us_per_op's change between commits)."""
        return measure(size, repeats=100, profile=True)["overhead_us_per_op"]

    track_profiled_overhead_us_per_op.unit = "us/op"  # type: ignore[attr-defined]
