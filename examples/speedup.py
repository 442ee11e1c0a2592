"""Time the examples' three models (MLP, CNN, GAN) on every device at hand and report the GPU's speedup.

    python examples/speedup.py                      # cpu, and cuda when present: a table, a chart, a JSON
    python examples/speedup.py --sweep-batch        # also batch sizes 16 to 1024: where the GPU starts to win
    python examples/speedup.py --devices cpu --models mlp,cnn --steps 100 --threads 1

How it measures: on each device, each model is built from the same seed and trained with the same settings
on the same batches (consecutive images of the training set). Every step starts from a batch on the host
and moves it to the device, as the examples' training loops do, so the host-to-device transfer is part of
each step's time. --warmup untimed steps come first (the first steps pay for allocations and, on a GPU,
kernel compilation); then the --steps timed steps run in 5 chunks, each closed by a device
synchronisation, and ms/step is the median chunk's, which one stray pause of the machine cannot move.
samples/s is batch * 1000 / (ms/step); the speedup is the CPU's ms/step over the device's, at the same
model and batch size.

Training works, not only fast: each row also gives the loss of the first and of the last timed step (read
back after the timing, so no step waits for it; the GAN's as D/G). Both devices start from the same
weights and see the same batches, so their losses must agree: to LOSS_RTOL_START relatively at the first
timed step and LOSS_RTOL_END at the last (float32 on both, but cuBLAS and OpenBLAS sum in different orders,
and --warmup + --steps Adam updates amplify the difference); the device's row says "agree" or "DIFFER".
The report also says which BLAS kernels and which Numba the CPU ran with (``minitensor.backends.cpu_info``).

--amp times each model and device a second time with the examples' --amp (autocast in the device's 16-bit
dtype and a GradScaler, docs/amp.md) and prints a second table beside the first: its speedup column is the
float32 step's ms over the AMP step's on the same device, and "agree" says that AMP's losses match float32's
within AMP_LOSS_RTOL (16-bit rounding moves them more than a device change does).

--sweep-batch measures each model at several batch sizes on each device and reports the crossover: the
smallest batch size from which the GPU is faster than the CPU at that size and at every larger size
measured (so a lucky size followed by a slower one does not count). Batch sizes above 64 run
proportionally fewer warm-up and timed steps (at least 1 and 5), so each measurement sees about as many
samples. Without a GPU there is nothing to compare, and the report says that only the CPU was measured.

Outputs in --out (default runs/speedup): speedup.json (the figures and the machine: platform, CPU count,
NumPy and BLAS, minitensor, date, GPU and CuPy when measured), speedup.png (a bar chart) and, with
--sweep-batch, speedup_sweep.png (samples/s against the batch size).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import itertools
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Sequence

import minitensor as mt
from common import (ImageData, Precision, StepFn, add_data_arguments, classifier_step, load_images, pick_device,
                    synchronize)
from gan import build_gan, gan_step
from minitensor import optim
from minitensor.utils.data import TensorDataset
from models import cnn, mlp

MODELS = ("mlp", "cnn", "gan")
DEVICES = ("cpu", "cuda")
EXAMPLE_BATCH_SIZES = {"mlp": 100, "cnn": 64, "gan": 64}  # each example's default --batch-size
SWEEP_BATCH_SIZES = (16, 64, 256, 1024)
SWEEP_FULL_STEPS_UP_TO = 64  # sweep batches larger than this run proportionally fewer steps
CHUNKS = 5  # the timed steps are split into this many chunks; the median chunk is reported
LOSS_RTOL_START, LOSS_RTOL_END = 1e-3, 2e-2  # how closely a device's losses must match the CPU's
AMP_LOSS_RTOL = (3e-2, 1e-1)  # how closely --amp's losses must match float32's on the same device (start, end)


@dataclass
class Measurement:
    """One model on one device at one batch size; ``speedup`` is None where the CPU was not measured."""
    model: str
    device: str
    batch_size: int
    steps: int
    ms_per_step: float
    samples_per_s: float
    speedup: float | None
    loss_start: dict[str, float]  # the losses of the first timed step, by name ("loss"; GAN: loss_D, loss_G)
    loss_end: dict[str, float]  # those of the last timed step
    agrees: bool | None  # whether the losses match the CPU's (None on the CPU itself)


# ----------------------------------------------------------------------------------------- command line
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The report's arguments, checked; lists come back as tuples of names or ints."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", default=None, metavar="LIST",
                   help="comma-separated devices to measure, from cpu,cuda (default: cpu, and cuda when "
                        "mt.cuda.is_available())")
    p.add_argument("--models", default=",".join(MODELS), metavar="LIST",
                   help=f"comma-separated models to measure, from {','.join(MODELS)} (default: all three)")
    p.add_argument("--steps", type=int, default=40,
                   help="timed training steps per model and device (default: 40; fewer in the sweep above batch 64)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps before them (default: 5)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="samples per step for every model (default: each example's own: "
                        + ", ".join(f"{m} {b}" for m, b in EXAMPLE_BATCH_SIZES.items()) + ")")
    p.add_argument("--sweep-batch", action="store_true",
                   help="also measure every model at each of --batch-sizes and report the crossover")
    p.add_argument("--batch-sizes", default=None, metavar="LIST",
                   help="comma-separated batch sizes for the sweep (implies --sweep-batch; default: "
                        + ",".join(map(str, SWEEP_BATCH_SIZES)) + ")")
    p.add_argument("--amp", action="store_true",
                   help="also time every model with mixed precision (the examples' --amp) and report its "
                        "speedup over float32 on the same device")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="BLAS threads for the CPU's matrix products (default: the "
                        "BLAS's own choice, usually one per core)")
    add_data_arguments(p, seed_help="seeds the weights and the GAN's noise (default: 0)")
    p.add_argument("--out", default="runs/speedup", metavar="DIR",
                   help="folder for speedup.json and the charts (default: runs/speedup)")
    args = p.parse_args(argv)
    args.models = _names(p, "--models", args.models, MODELS)
    args.devices = _names(p, "--devices", args.devices, DEVICES) if args.devices else None
    args.sweep_batch = args.sweep_batch or args.batch_sizes is not None
    args.batch_sizes = _sizes(p, args.batch_sizes) if args.batch_sizes else SWEEP_BATCH_SIZES
    for name, least in (("steps", 1), ("warmup", 0), ("batch_size", 1), ("threads", 1)):
        value = getattr(args, name)
        if value is not None and value < least:
            p.error(f"--{name.replace('_', '-')} must be at least {least}, got {value}")
    return args


def _names(parser: argparse.ArgumentParser, option: str, text: str, known: Sequence[str]) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))  # ordered, no repeats
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        parser.error(f"{option}: unknown name(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
                     f"choose from {', '.join(known)}")
    return names


def _sizes(parser: argparse.ArgumentParser, text: str) -> tuple[int, ...]:
    try:
        sizes = sorted({int(s) for s in text.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--batch-sizes: expected comma-separated integers, got {text!r}")
    if not sizes or sizes[0] < 1:
        parser.error(f"--batch-sizes: expected positive integers, got {text!r}")
    return tuple(sizes)


def pick_devices(names: Sequence[str] | None) -> list[mt.device]:
    """The devices asked for (a missing GPU exits with the reason), or cpu plus cuda when available."""
    if names is None:
        names = ("cpu", "cuda") if mt.cuda.is_available() else ("cpu",)
    return [pick_device(n) for n in names]


# -------------------------------------------------------------------------------------------- measuring
def load_data(dataset: str, data_dir: str | None, models: Sequence[str]) -> dict[str, ImageData]:
    """The images by model: standardised for the classifiers, in [-1, 1] for the GAN (as in the examples)."""
    scales = {"gan": "tanh", "mlp": "standard", "cnn": "standard"}
    loaded: dict[str, ImageData] = {}
    for scale in dict.fromkeys(scales[m] for m in models):
        loaded[scale] = load_images(dataset, data_dir, scale=scale)
        dataset = loaded[scale].dataset  # after a fall-back to digits (said once), no second search for MNIST
    return {m: loaded[scales[m]] for m in models}


def build_step(model: str, image_size: int, device: mt.device, seed: int, amp: bool = False) -> StepFn:
    """A fresh model (the same weights on every device, from ``seed``), its optimizers and its training
    step, exactly as its example trains it (``amp``: as with its --amp)."""
    mt.manual_seed(seed)
    precision = Precision(amp, device)
    if model == "gan":
        return gan_step(*build_gan("gan", image_size, device), precision=precision)
    net = {"mlp": mlp, "cnn": cnn}[model](image_size).to(device)
    return classifier_step(net, optim.Adam(net.parameters(), lr=1e-3), precision)


def host_batches(data: TensorDataset, batch_size: int, count: int) -> list[tuple[mt.Tensor, mt.Tensor]]:
    """Up to ``count`` distinct batches of consecutive samples (wrapping round the dataset), on the host:
    fewer when the dataset runs out, since the steps then cycle through them anyway."""
    images, labels = data.tensors
    n = images.shape[0]
    batches = []
    for b in range(min(count, -(-n // batch_size))):
        index = (mt.arange(batch_size) + b * batch_size) % n
        batches.append((images[index], labels[index]))
    return batches


def chunk_sizes(steps: int, chunks: int = CHUNKS) -> list[int]:
    """``steps`` split into ``chunks`` near-equal positive parts (fewer when steps < chunks)."""
    k = min(chunks, steps)
    return [steps // k + (i < steps % k) for i in range(k)]


@dataclass
class Timing:
    """``time_step``'s result: ms/step, and the losses of the first and the last timed step."""
    ms_per_step: float
    loss_start: dict[str, float]
    loss_end: dict[str, float]


def time_step(step: StepFn, batches: list[tuple[mt.Tensor, mt.Tensor]], device: mt.device,
              warmup: int, steps: int) -> Timing:
    """Milliseconds per step of ``step`` fed host batches moved to ``device`` (the median over the chunks
    of the timed steps, each chunk closed by a device synchronisation), and the first and last timed
    steps' losses, read back once the timing is over."""
    feed = itertools.cycle(batches)

    def one_step() -> dict[str, mt.Tensor]:
        x, y = next(feed)
        return step(x.to(device), y.to(device))  # the losses stay on the device: no read-back, no sync

    for _ in range(warmup):
        one_step()
    synchronize(device)
    per_chunk: list[float] = []
    first: dict[str, mt.Tensor] | None = None
    last: dict[str, mt.Tensor] = {}
    for n in chunk_sizes(steps):
        start = time.perf_counter()
        for _ in range(n):
            last = one_step()
            first = last if first is None else first
        synchronize(device)
        per_chunk.append(1e3 * (time.perf_counter() - start) / n)
    return Timing(statistics.median(per_chunk), _read(first or {}), _read(last))


def _read(losses: dict[str, mt.Tensor]) -> dict[str, float]:
    return {name: round(value.item(), 6) for name, value in losses.items()}


def losses_agree(cpu: Measurement, other: Measurement,
                 rtols: tuple[float, float] = (LOSS_RTOL_START, LOSS_RTOL_END)) -> bool:
    """Whether ``other``'s losses match the CPU's (or the reference's) within ``rtols``: (first step, last)."""
    def close(a: dict[str, float], b: dict[str, float], rtol: float) -> bool:
        return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= rtol * max(abs(a[k]), 1e-6) for k in a)
    return close(cpu.loss_start, other.loss_start, rtols[0]) and close(cpu.loss_end, other.loss_end, rtols[1])


def _row(model: str, device: str, batch_size: int, steps: int, t: Timing, reference_ms: float | None
         ) -> Measurement:
    """A table row from a timing; ``speedup`` is ``reference_ms`` over its ms/step (None without one)."""
    return Measurement(model, device, batch_size, steps, round(t.ms_per_step, 4),
                       round(batch_size * 1e3 / t.ms_per_step, 1),
                       # four significant digits, not three decimals: an AMP row 30x slower is a ratio of 0.03
                       None if reference_ms is None else float(f"{reference_ms / t.ms_per_step:.4g}"),
                       t.loss_start, t.loss_end, None)


def measure(model: str, devices: Sequence[mt.device], data: ImageData, batch_size: int, warmup: int,
            steps: int, seed: int) -> Iterator[Measurement]:
    """``model`` on each device (the CPU first, so that each speedup is known when its row is)."""
    batches = host_batches(data.train, batch_size, warmup + steps)
    cpu = None
    for device in sorted(devices, key=lambda d: d.type != "cpu"):
        t = time_step(build_step(model, data.image_size, device, seed), batches, device, warmup, steps)
        cpu_ms = t.ms_per_step if device.type == "cpu" else cpu.ms_per_step if cpu else None
        row = _row(model, device.type, batch_size, steps, t, cpu_ms)
        if device.type == "cpu":
            cpu = row
        elif cpu is not None:
            row.agrees = losses_agree(cpu, row)
        yield row


def measure_amp(fp32_rows: Sequence[Measurement], data: dict[str, ImageData], warmup: int, steps: int,
                seed: int) -> Iterator[Measurement]:
    """Each row of the float32 table again with --amp: ``speedup`` is the float32 row's ms/step over the AMP
    step's (same model, device and batch), ``agrees`` whether AMP's losses match float32's (AMP_LOSS_RTOL)."""
    for base in fp32_rows:
        device, images = mt.device(base.device), data[base.model]
        batches = host_batches(images.train, base.batch_size, warmup + steps)
        t = time_step(build_step(base.model, images.image_size, device, seed, amp=True), batches, device,
                      warmup, steps)
        row = _row(base.model, base.device, base.batch_size, steps, t, base.ms_per_step)
        row.agrees = losses_agree(base, row, AMP_LOSS_RTOL)
        yield row


def sweep_steps(count: int, batch_size: int, least: int) -> int:
    """``count`` steps up to batch SWEEP_FULL_STEPS_UP_TO, proportionally fewer (but at least ``least``)
    above, so that each measurement of the sweep sees about as many samples and a CPU gets through a
    CNN at batch 1024 in seconds."""
    return max(least, min(count, count * SWEEP_FULL_STEPS_UP_TO // batch_size))


def crossover(cpu_ms: dict[int, float], gpu_ms: dict[int, float]) -> int | None:
    """The smallest batch size from which the GPU is faster (strictly fewer ms/step) than the CPU at that
    size and every larger one measured on both; None when the GPU is not faster at the largest."""
    found = None
    for size in sorted(set(cpu_ms) & set(gpu_ms), reverse=True):
        if gpu_ms[size] >= cpu_ms[size]:
            break
        found = size
    return found


def crossovers(rows: Sequence[Measurement], models: Sequence[str]) -> dict[str, int | None]:
    """``crossover`` of each model's sweep."""
    def ms(model: str, device: str) -> dict[int, float]:
        return {r.batch_size: r.ms_per_step for r in rows if r.model == model and r.device == device}
    return {m: crossover(ms(m, "cpu"), ms(m, "cuda")) for m in models}


# ------------------------------------------------------------------------------------------- reporting
HEADER = (f"{'model':<6} {'device':<6} {'batch':>6} {'steps':>6} {'ms/step':>10} {'samples/s':>11} {'speedup':>8} "
          f"{'loss@start':>15} {'loss@end':>15} {'vs cpu':>6}")


def loss_text(losses: dict[str, float]) -> str:
    """One word: the loss, or the GAN's D/G losses."""
    return "/".join(f"{v:.4g}" for v in losses.values()) or "-"


def table_row(r: Measurement) -> str:
    speedup = "-" if r.speedup is None else f"{r.speedup:.2f}x"
    agrees = "-" if r.agrees is None else "agree" if r.agrees else "DIFFER"
    return (f"{r.model:<6} {r.device:<6} {r.batch_size:>6} {r.steps:>6} {r.ms_per_step:>10.3f} "
            f"{r.samples_per_s:>11.1f} {speedup:>8} {loss_text(r.loss_start):>15} {loss_text(r.loss_end):>15} "
            f"{agrees:>6}")


def print_table(title: str, rows: Iterator[Measurement], against: str = "cpu") -> list[Measurement]:
    """Print each row as it is measured (a slow model shows progress); return them all. ``against``: what the
    last column compares the losses with."""
    header = HEADER.replace("vs cpu", f"vs {against}")
    print(f"\n{title}\n{header}\n{'-' * len(header)}", flush=True)
    done = []
    for r in rows:
        print(table_row(r), flush=True)
        done.append(r)
    return done


def crossover_line(model: str, size: int | None, sizes: Sequence[int]) -> str:
    if size is None:
        return (f"{model}: no crossover in the range: the GPU is not faster than the CPU from any batch size "
                f"measured ({sizes[0]} to {sizes[-1]}) up")
    return f"{model}: the GPU beats the CPU from batch {size} up"


def only_one_device_note(devices: Sequence[mt.device]) -> str | None:
    """What the report says when it compares nothing (None when it measured cpu and cuda)."""
    types = {d.type for d in devices}
    if types == {"cpu"}:
        why = "no CUDA device is available (mt.cuda.is_available() is False)" if not mt.cuda.is_available() \
            else "--devices cpu"
        return f"Only the CPU was measured: {why}, so there is no GPU speedup to report."
    if types == {"cuda"}:
        return "Only the GPU was measured (--devices cuda), so there is no CPU to compare with."
    return None


@contextlib.contextmanager
def blas_threads(threads: int | None) -> Iterator[None]:
    """Limit the BLAS to ``threads`` threads for the block (its own choice when None)."""
    if threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits  # a dependency of minitensor's

    with threadpool_limits(limits=threads, user_api="blas"):
        yield


def machine_info(devices: Sequence[mt.device]) -> dict[str, Any]:
    """Where the figures were measured; the GPU's name and CuPy's version only when a GPU was measured."""
    info: dict[str, Any] = {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "platform": platform.platform(), "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "numpy": importlib.metadata.version("numpy"), "cpu_info": mt.backends.cpu_info().as_dict(),
        "minitensor": mt.__version__,
    }
    if any(d.type == "cuda" for d in devices):
        info["gpu"] = mt.cuda.get_device_name()
        # the installed CuPy distribution (cupy-cuda12x, ...), read without importing cupy here
        info["cupy"] = importlib.metadata.version(importlib.metadata.packages_distributions()["cupy"][0])
    return info


def write_charts(report: dict[str, Any], out: Path) -> list[Path]:
    """speedup.png (and speedup_sweep.png after a sweep); none, saying why, without matplotlib."""
    try:
        import speedup_plot
    except ImportError as e:  # matplotlib is in the examples extra, which a bare install lacks
        print(f"no charts: {e} (pip install 'minitensor[examples]')", file=sys.stderr)
        return []
    cpu = report["machine"]["cpu_info"]
    cpu_line = (f"CPU: {cpu['blas']}, {cpu['coretype']} kernels, {cpu['threads']} threads, "
                f"Numba {cpu['numba'] or 'off'}")
    note = "\n".join(filter(None, [report["note"], cpu_line]))
    paths = [speedup_plot.bar_chart(report["results"], note, out / "speedup.png")]
    if report.get("sweep"):
        paths.append(speedup_plot.sweep_chart(report["sweep"]["results"], report["sweep"]["crossover"],
                                              out / "speedup_sweep.png"))
    return paths


# ------------------------------------------------------------------------------------------------ main
def run_sweep(args: argparse.Namespace, devices: Sequence[mt.device], data: dict[str, ImageData]
              ) -> dict[str, Any]:
    """Each model at each of --batch-sizes on each device: print the table and the crossovers, return
    them for the JSON (``crossover`` None when the CPU and the GPU were not both measured)."""
    rows = print_table("Batch-size sweep", itertools.chain.from_iterable(
        measure(m, devices, data[m], size, sweep_steps(args.warmup, size, min(1, args.warmup)),
                sweep_steps(args.steps, size, min(CHUNKS, args.steps)), args.seed)
        for m in args.models for size in args.batch_sizes))
    measured = {d.type for d in devices}
    found = crossovers(rows, args.models) if {"cpu", "cuda"} <= measured else None
    print("\nCrossover (the batch size from which the GPU stays faster than the CPU):")
    if found is None:
        print(f"  not measured: only the {'CPU' if 'cpu' in measured else 'GPU'} was measured")
    for model, size in (found or {}).items():
        print("  " + crossover_line(model, size, args.batch_sizes))
    return {"batch_sizes": list(args.batch_sizes), "results": [asdict(r) for r in rows], "crossover": found}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Measure, print the table(s), write speedup.json and the charts; return the report (the JSON's
    content)."""
    args = parse_args(argv)
    devices = pick_devices(args.devices)
    data = load_data(args.dataset, args.data_dir, args.models)
    with blas_threads(args.threads):
        machine = machine_info(devices)
        print(f"speedup: {data[args.models[0]].name}; devices {', '.join(d.type for d in devices)}; "
              f"{args.warmup} warm-up and {args.steps} timed steps per measurement, ms/step the median of "
              f"{CHUNKS} chunks; {machine['cpu_count']} CPUs\nCPU: {mt.backends.cpu_info()}")
        rows = print_table("Training step, each batch moved from the host", itertools.chain.from_iterable(
            measure(m, devices, data[m], args.batch_size or EXAMPLE_BATCH_SIZES[m], args.warmup, args.steps,
                    args.seed) for m in args.models))
        amp = print_table("Mixed precision (--amp: autocast + GradScaler); speedup = float32's ms/step / AMP's on "
                          "the same device", measure_amp(rows, data, args.warmup, args.steps, args.seed),
                          against="fp32") if args.amp else None
        sweep = run_sweep(args, devices, data) if args.sweep_batch else None
    note = only_one_device_note(devices)
    if note:
        print("\n" + note)
    report = {
        "machine": machine, "dataset": data[args.models[0]].name, "devices": [d.type for d in devices],
        "note": note, "results": [asdict(r) for r in rows], "sweep": sweep,
        "amp": None if amp is None else [asdict(r) for r in amp],
        "settings": {"models": list(args.models), "steps": args.steps, "warmup": args.warmup, "chunks": CHUNKS,
                     "seed": args.seed, "threads": args.threads, "timing": "median chunk's ms/step; each step "
                     "moves its batch from the host to the device"},
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "speedup.json").write_text(json.dumps(report, indent=2))
    print("\nwrote " + ", ".join(map(str, [out / "speedup.json", *write_charts(report, out)])))
    return report


if __name__ == "__main__":
    main()
