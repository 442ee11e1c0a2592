"""--profile for the examples: ``minitensor.profiler`` over a few training steps after warm-up.

The profile skips WAIT steps (the first steps compile kernels and fill caches), warms up for one, then
records STEPS steps (default 5) within one epoch. When they are done it prints the top-15 table by self
time, and writes into the run folder ``profile.txt`` (that table), ``trace.json`` (open it in
chrome://tracing or ui.perfetto.dev) and, with matplotlib, ``profile.png``: each op's self time per step,
coloured by the part of the step it belongs to (forward, backward, optimizer, data, or the Python between
ops, which is the self time of the ProfilerStep ranges).
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import minitensor as mt
from minitensor.profiler import ProfilerAction, ProfilerActivity, profile, schedule

WAIT, WARMUP, TOP = 2, 1, 15
COLOURS = {"forward": "tab:blue", "backward": "tab:orange", "optimizer": "tab:green", "data": "tab:purple",
           "between ops": "tab:gray"}


def part_of_step(event: Any) -> str:
    """Which part of a training step an event's self time belongs to, by its outermost classifying
    ancestor: the optimizer's step, the DataLoader's next, a backward node, a forward op; else the
    Python between ops (a ProfilerStep range's own time)."""
    chain = []
    while event is not None:
        chain.append(event)
        event = event.cpu_parent
    for e in reversed(chain):
        if e.name.startswith("Optimizer.step"):
            return "optimizer"
        if e.name.startswith("enumerate(DataLoader)"):
            return "data"
        if e.kind == "backward":
            return "backward"
        if e.kind in ("cpu_op", "kernel"):
            return "forward"
    return "between ops"


def self_time_by_part(events: Iterable[Any], steps: int) -> dict[tuple[str, str], float]:
    """{(part, op name): self CPU ms per step}; the ProfilerStep ranges all count as one name."""
    times: dict[tuple[str, str], float] = defaultdict(float)
    for e in events:
        name = "Python between ops" if e.name.startswith("ProfilerStep#") else e.name
        times[(part_of_step(e), name)] += e.self_cpu_time_total / 1e3 / steps
    return dict(times)


def chart(times: dict[tuple[str, str], float], title: str, path: Path) -> Path:
    """A horizontal bar per op (the TOP largest), its length the self time per step, coloured by part;
    the legend gives each part's share of the step."""
    from matplotlib.figure import Figure  # the examples extra; imported only when a chart is drawn
    from matplotlib.patches import Patch

    top = sorted(times.items(), key=lambda item: item[1])[-TOP:]
    totals: dict[str, float] = defaultdict(float)
    for (part, _), ms in times.items():
        totals[part] += ms
    fig = Figure(figsize=(9.0, 5.5), dpi=100)
    ax = fig.subplots()
    ax.barh([f"{name} ({part})" for (part, name), _ in top], [ms for _, ms in top],
            color=[COLOURS[part] for (part, _), _ in top])
    step = sum(totals.values())
    handles = [Patch(color=COLOURS[p], label=f"{p}: {ms:.2f} ms ({ms / step:.0%})")
               for p, ms in sorted(totals.items(), key=lambda item: -item[1])]
    ax.legend(handles=handles, loc="lower right", fontsize=9, title=f"step: {step:.2f} ms")
    ax.set_xlabel("self CPU time per step (ms)")
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return path


class StepProfiler:
    """A profile driven by ``Run.train_epoch``: ``begin()`` before the steps, ``step()`` after each,
    ``end_of_epoch()`` after the epoch's last, ``finish()`` at the end of training."""

    def __init__(self, steps: int, out: Path, device: mt.device, example: str) -> None:
        self.steps, self.out, self.example = steps, out, example
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        self.sort_by = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
        self.bandwidth = device.type == "cpu"  # GB/s per op: on CUDA the CPU times are launch times
        self.prof = profile(activities=activities, schedule=schedule(wait=WAIT, warmup=WARMUP, active=steps,
                                                                     repeat=1), on_trace_ready=self._report)
        self.running = self.reported = False
        self.recorded = 0  # training steps completed while recording
        self.files: dict[str, Path] = {}

    def begin(self) -> None:
        if not self.running and not self.reported:
            self.prof.start()
            self.running = True

    def step(self) -> None:
        if self.running:
            self.recorded += self.prof.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
            self.prof.step()
            if self.reported:
                self._stop()

    def end_of_epoch(self) -> None:
        """Stop at an epoch's end once recording has begun: evaluation and checkpoints are not steps."""
        if self.running and self.prof.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._stop()

    def finish(self) -> None:
        if self.running:
            self._stop()
        if not self.files:
            print(f"--profile: the run ended before a step was recorded (it skips {WAIT + WARMUP} steps first)")

    def _stop(self) -> None:
        self.running = False
        self.prof.stop()

    def _report(self, prof: profile) -> None:
        self.reported = True
        recorded = self.recorded
        if not recorded:  # the epoch ended in the first recorded step: only its data fetch was seen
            return
        table = prof.key_averages().table(sort_by=self.sort_by, row_limit=TOP, bandwidth=self.bandwidth)
        print(f"profile of {recorded} training steps (after {WAIT + WARMUP}), top {TOP} by self time:\n{table}")
        self.files["table"] = self.out / "profile.txt"
        self.files["table"].write_text(table)
        self.files["trace"] = self.out / "trace.json"
        prof.export_chrome_trace(str(self.files["trace"]))
        from image_grid import png_available
        if png_available():
            title = f"{self.example}: self CPU time per training step, mean of {recorded} steps"
            self.files["chart"] = chart(self_time_by_part(prof.events(), recorded), title,
                                        self.out / "profile.png")
        print("profile written: " + ", ".join(str(p) for p in self.files.values()))
