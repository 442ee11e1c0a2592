"""Gradient checkpointing (docs/checkpoint.md): one training step of a 32-layer MLP (Linear 1024 -> 1024 and
ReLU per layer, batch 256, float32, MSE loss, SGD) plain and with ``checkpoint_sequential(..., segments=4)``.

Activation memory is the step's peak above what was live when it began (``memory.py``): the parameters,
the optimizer state, the batch and the previous step's gradients, which ``zero_grad()`` drops after the
forward, while backward makes the new ones as it frees the activations.
The targets (issue #16): checkpointed peak <= 0.4 x plain, step time <= 1.4 x plain.

    python benchmarks/bench_checkpoint.py [--device cpu] [--repeats 5] [--threads N]

prints both figures and their ratios from one run: medians of ``--repeats`` alternated steps.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root makes ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import minitensor as mt  # noqa: E402
from minitensor import nn  # noqa: E402
from minitensor.utils.checkpoint import checkpoint_sequential  # noqa: E402

from benchmarks.compare_worker import set_threads  # noqa: E402
from benchmarks.memory import peak_above_start  # noqa: E402
from benchmarks.workloads import DEVICES, require_device  # noqa: E402

LAYERS, WIDTH, BATCH, SEGMENTS = 32, 1024, 256, 4
MIB = 2 ** 20
MODES = ("plain", "checkpoint")


class Step:
    """The MLP, its SGD optimizer and a fixed batch on ``device``; ``run(mode)`` is one training step."""

    def __init__(self, device: str) -> None:
        self.device = mt.device(device)
        mt.manual_seed(0)
        self.model = nn.Sequential(*(m for _ in range(LAYERS) for m in (nn.Linear(WIDTH, WIDTH), nn.ReLU())))
        self.model.to(self.device)
        self.opt = mt.optim.SGD(self.model.parameters(), lr=1e-3)
        self.x = mt.randn(BATCH, WIDTH, device=self.device)
        self.target = mt.randn(BATCH, WIDTH, device=self.device)

    def run(self, mode: str) -> None:
        out = (checkpoint_sequential(self.model, SEGMENTS, self.x, use_reentrant=False) if mode == "checkpoint"
               else self.model(self.x))
        loss = nn.functional.mse_loss(out, self.target)
        del out  # the graph keeps what it needs
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self.device.type == "cuda":
            mt.cuda.synchronize()

    def state_bytes(self) -> int:
        """Bytes of the parameters, their gradients and the optimizer's state tensors."""
        params = list(self.model.parameters())
        state = [v for s in self.opt.state.values() for v in s.values() if isinstance(v, mt.Tensor)]
        return sum(t.numel() * t.element_size() for t in (*params, *(p.grad for p in params if p.grad is not None),
                                                           *state))


def activation_peaks(device: str) -> dict[str, int]:
    """Bytes above the state of one step in each mode, on a model built while tracing (CPU) so that frees of
    its memory count; two warm-up steps first (gradients allocated, allocator settled)."""
    tracing = mt.device(device).type == "cpu" and not tracemalloc.is_tracing()
    if tracing:
        tracemalloc.start()
    try:
        step = Step(device)
        for mode in MODES:
            step.run(mode)
        return {mode: peak_above_start(lambda: step.run(mode), device) for mode in MODES}
    finally:
        if tracing:
            tracemalloc.stop()


def step_seconds(step: Step, repeats: int) -> dict[str, float]:
    """Median seconds per step of each mode over ``repeats`` rounds, the modes alternating in each round."""
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(repeats):
        for mode in MODES:
            start = time.perf_counter()
            step.run(mode)
            samples[mode].append(time.perf_counter() - start)
    return {mode: statistics.median(s) for mode, s in samples.items()}


class CheckpointRatios:
    """Peak activation memory (MiB) of a step, plain and checkpointed, and their ratio (target <= 0.4); the
    step time ratio (target <= 1.4) from medians of alternated steps."""

    params = [list(DEVICES)]
    param_names = ["device"]

    def setup(self, device: str) -> None:
        require_device(device)
        self.peaks = activation_peaks(device)
        self.step = Step(device)
        step_seconds(self.step, 1)  # warm-up

    def track_activation_peak_plain(self, device: str) -> float:
        return self.peaks["plain"] / MIB

    def track_activation_peak_checkpoint(self, device: str) -> float:
        return self.peaks["checkpoint"] / MIB

    def track_activation_peak_ratio(self, device: str) -> float:
        return self.peaks["checkpoint"] / self.peaks["plain"]

    def track_step_time_ratio(self, device: str) -> float:
        seconds = step_seconds(self.step, 3)
        return seconds["checkpoint"] / seconds["plain"]

    track_activation_peak_plain.unit = "MiB"  # type: ignore[attr-defined]
    track_activation_peak_checkpoint.unit = "MiB"  # type: ignore[attr-defined]
    track_activation_peak_ratio.unit = "x"  # type: ignore[attr-defined]
    track_step_time_ratio.unit = "x"  # type: ignore[attr-defined]


class CheckpointStep:
    """Time of one training step, plain or checkpointed."""

    params = [list(DEVICES), list(MODES)]
    param_names = ["device", "mode"]

    def setup(self, device: str, mode: str) -> None:
        require_device(device)
        self.step = Step(device)
        self.step.run(mode)  # warm-up

    def time_step(self, device: str, mode: str) -> None:
        self.step.run(mode)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu")
    p.add_argument("--repeats", type=int, default=5, help="alternated steps per mode for the time (median)")
    p.add_argument("--threads", type=int, default=None, help="BLAS threads (default: the BLAS's own)")
    args = p.parse_args(argv)
    limiter = set_threads(args.threads)  # noqa: F841  (the limit lasts while it is referenced)
    peaks = activation_peaks(args.device)
    step = Step(args.device)
    step_seconds(step, 1)  # warm-up
    seconds = step_seconds(step, args.repeats)
    print(f"{LAYERS}-layer MLP, width {WIDTH}, batch {BATCH}, checkpoint_sequential segments={SEGMENTS}, "
          f"{args.device}, BLAS threads {args.threads or 'default'}; state (parameters, gradients, SGD) "
          f"{step.state_bytes() / MIB:.0f} MiB")
    print(f"activation peak: plain {peaks['plain'] / MIB:.1f} MiB, checkpoint {peaks['checkpoint'] / MIB:.1f} MiB,"
          f" ratio {peaks['checkpoint'] / peaks['plain']:.3f} (target <= 0.4)")
    print(f"step time (median of {args.repeats}): plain {seconds['plain'] * 1e3:.0f} ms, checkpoint "
          f"{seconds['checkpoint'] * 1e3:.0f} ms, ratio {seconds['checkpoint'] / seconds['plain']:.3f} "
          "(target <= 1.4)")


if __name__ == "__main__":
    main()
