"""minitensor beside PyTorch on the workloads of ``workloads.py`` (MLP-S, MLP-L, CNN, GAN, Transformer, GPT,
LSTM): one training step each, timed in the same run, from the same weights and the same batches.

    python benchmarks/compare.py --threads 2                       # cpu, every workload
    python benchmarks/compare.py --threads 2 --isa avx2 --bound    # an AVX2 machine on an AVX-512 one (issue #28)
    python benchmarks/compare.py --workloads mlp-s,gan --repeats 11 --json runs/compare.json
    python benchmarks/compare.py --device cuda --markdown docs/perf/cuda-h100.md
    python benchmarks/compare.py --device cuda --amp --workloads mlp-l,cnn --batch-size 256   # issue #15

How it measures, per workload:

1. Each framework runs the workload in its own worker process, started fresh (spawned) for it, as a
   user's training would: neither library's thread pools, allocator or CUDA context disturb the other's.
   This process only builds the minitensor workload once to copy its initial weights, its batch and (GAN)
   its first step's noise, as NumPy arrays, into the PyTorch twin (``torch_workloads.py``).
2. The first step's losses must agree within --rtol (both compute in float32), or the workload is
   skipped with a message: its timings would compare different computations.
3. --warmup more steps each, then --repeats rounds. A round times a chunk of --steps steps of minitensor,
   then one of PyTorch (A B A B ...), each chunk between two device synchronisations and after a pause
   (SETTLE_SECONDS) in which the other's threads stop spinning, so that the drift of a shared, noisy
   machine hits both alike and neither pays for the other's idle threads. ms/step is the median over the
   rounds; the ratio is minitensor / PyTorch of the medians (below 1: minitensor is faster).
4. Peak memory of a training step, everything live included (weights, gradients, optimizer state, the
   batch, activations, temporaries, the libraries' work buffers), after the timed steps:
   - cpu: from the kernel's accounting of the worker. A throw-away copy of the workload first runs two
     steps and is freed (and malloc_trim returns the C heap's free pages), so that each framework's
     one-off costs (modules PyTorch imports at its first optimizer step, thread pools, BLAS buffers) are
     in the baseline: the anonymous resident memory (RssAnon) then. After the timed rounds the
     high-water mark VmHWM is reset (``/proc/self/clear_refs``) and compare_worker.PEAK_STEPS steps run; the peak is
     VmHWM less the file-backed and shared pages (code) less the baseline. Resident memory counts
     touched pages, including memory the C allocator keeps after a free. (tracemalloc, which the asv
     suite uses for minitensor, does not see PyTorch's allocator.)
   - cuda: each framework's ``max_memory_allocated`` over one step after ``reset_peak_memory_stats``.
     PyTorch's is exact; minitensor's is a lower bound (CuPy's pool keeps no high-water mark, see
     docs/cuda.md), so its ``max_memory_reserved``, an upper bound, is in the JSON too.

--amp also runs each framework under mixed precision, in two more workers alternated with the float32 ones
(A B A' B' ...): minitensor as the examples' --amp (``common.Precision``: autocast in the device's 16-bit
dtype, a GradScaler on every device), PyTorch by its recipe (``torch.autocast(device_type, dtype)``, float16
on cuda and bfloat16 on the cpu, ``torch.amp.GradScaler`` enabled on cuda only). The AMP first losses must
agree within AMP_RTOL; the report adds each framework's AMP speedup (its float32 ms/step over its AMP
ms/step) and minitensor AMP / PyTorch AMP. The GAN is left out: PyTorch's autocast refuses its
binary_cross_entropy.

--isa avx2|native sets the variables that hold OpenBLAS, Numba and PyTorch to AVX2, or removes them all, in
every worker's environment, then checks in each worker which kernels its libraries run (``isa.py``); a
workload whose kernels are not the ones asked for is not timed. --bound adds this machine's sgemm and memcpy
rates, measured in a worker under the same --isa, and each workload's bound from its FLOPs and bytes
(``bounds.py``), with both frameworks' distance from it.

PyTorch is optional: without it, minitensor is timed alone. --threads N sets both frameworks' CPU threads
in their workers (``torch.set_num_threads(N)``, which covers the MKL linked into PyTorch; threadpoolctl
for NumPy's BLAS and the OpenMP runtime PyTorch loads); without it each keeps its default. The load
average is recorded: on a loaded machine, threads that wait for each other at every op (PyTorch's OpenMP
threads, OpenBLAS's) lose whole time slices.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

if __package__ in (None, ""):  # run as a script: make the ``benchmarks`` package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import minitensor as mt  # noqa: E402  (before NumPy: it chooses OpenBLAS's kernels, see backends/blas.py)
import numpy as np  # noqa: E402
from benchmarks import bounds, isa, torch_workloads, workloads  # noqa: E402
from benchmarks.compare_worker import MINITENSOR, PYTORCH, Worker  # noqa: E402
TITLES = {"mlp-s": "MLP-S", "mlp-l": "MLP-L", "cnn": "CNN", "gan": "GAN", "transformer": "Transformer",
          "gpt": "GPT", "lstm": "LSTM"}
AMP_DEFAULT = ("mlp-s", "mlp-l", "cnn", "transformer")  # --amp's workloads unless --workloads names others
# Idle time before each timed chunk. A framework's worker threads spin-wait after its chunk ends (measured
# here after a GPT chunk: OpenBLAS's ~100 ms of CPU, PyTorch's OpenMP ~10 ms), on the cores the other
# framework's chunk, next, needs: without the pause each chunk paid for the previous one's spinning (the
# GPT's minitensor steps took 36.5 ms in compare.py against 30-32 ms alone).
SETTLE_SECONDS = 0.15
CHUNK_SECONDS = 0.25  # --steps by default: steps per chunk for the slower framework's chunk to last this
AMP_SUFFIX = " AMP"  # the label of a framework's AMP worker: "minitensor AMP"
AMP_RTOL = 3e-2      # the AMP first losses' agreement: 16-bit matmuls round each product to ~3 digits


# ----------------------------------------------------------------------------------------- command line
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", choices=workloads.DEVICES,
                   help="where both frameworks run (default: cpu)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="CPU threads for both: torch.set_num_threads(N), and threadpoolctl's limit on NumPy's "
                        "BLAS and PyTorch's OpenMP runtime (default: each library's own choice)")
    p.add_argument("--workloads", default=None, metavar="LIST",
                   help=f"comma-separated, from {','.join(workloads.WORKLOADS)} (default: all; with --amp "
                        f"{','.join(AMP_DEFAULT)})")
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help="samples per step of every workload (default: each one's own, see workloads.py)")
    p.add_argument("--amp", action="store_true",
                   help="also time both frameworks under mixed precision, beside float32 (see above)")
    p.add_argument("--repeats", type=int, default=7,
                   help="rounds of one timed chunk per framework; ms/step is their median (default: 7)")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help=f"steps per timed chunk (default: enough for about {CHUNK_SECONDS} s of the slower "
                        "framework, judged from the warm-up; at least 3)")
    p.add_argument("--warmup", type=int, default=3, help="untimed steps after the first one (default: 3)")
    p.add_argument("--settle", type=float, default=SETTLE_SECONDS, metavar="SECONDS",
                   help=f"idle time before each timed chunk (default: {SETTLE_SECONDS}; 0: the chunks back to "
                        f"back, as before 2026-11-28, when each paid for the other's spinning threads)")
    p.add_argument("--rtol", type=float, default=1e-4,
                   help="relative tolerance of the first losses' agreement (default: 1e-4)")
    p.add_argument("--seed", type=int, default=0, help="seeds the weights, the batch and the noise (default: 0)")
    p.add_argument("--isa", default=None, choices=isa.ISAS,
                   help="the vector instructions both frameworks' kernels may use: avx2 holds OpenBLAS, Numba and "
                        "PyTorch to AVX2 on an AVX-512 CPU, native lets each pick the CPU's best; the kernels that "
                        "ran are checked, and a workload whose kernels differ is not timed (default: the "
                        "environment's, unchecked; see benchmarks/isa.py)")
    p.add_argument("--bound", action="store_true",
                   help="also measure this machine's sgemm and memcpy rates (under --isa) and report each workload's "
                        "bound: GEMM FLOPs / sgemm rate + bytes / memcpy rate (see benchmarks/bounds.py)")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurement")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the results and the machine as JSON")
    p.add_argument("--markdown", default=None, metavar="PATH",
                   help="also write a Markdown table, with the machine and the conditions, e.g. for docs/perf/")
    args = p.parse_args(argv)
    default = AMP_DEFAULT if args.amp else workloads.WORKLOADS
    names = [n.strip().lower() for n in args.workloads.split(",") if n.strip()] if args.workloads else default
    unknown = [n for n in names if n not in workloads.WORKLOADS]
    if unknown or not names:
        p.error(f"--workloads: unknown {', '.join(map(repr, unknown)) or '(none given)'}; "
                f"choose from {', '.join(workloads.WORKLOADS)}")
    if args.amp and "gan" in names:
        p.error("--amp: the GAN has no PyTorch twin under autocast (it refuses binary_cross_entropy); leave it out")
    args.workloads = tuple(dict.fromkeys(names))
    for name, least in (("repeats", 1), ("steps", 1), ("warmup", 0), ("threads", 1), ("batch_size", 1)):
        value = getattr(args, name)
        if value is not None and value < least:
            p.error(f"--{name.replace('_', '-')} must be at least {least}, got {value}")
    if not args.rtol > 0:
        p.error(f"--rtol must be positive, got {args.rtol}")
    if args.device == "cuda" and not mt.cuda.is_available():
        p.error("--device cuda: no usable GPU here (mt.cuda.is_available() is False)")
    return args


# ------------------------------------------------------------------------------------------------ timing
def alternate(chunks: dict[str, Callable[[], float]], repeats: int, settle: float = SETTLE_SECONDS
              ) -> dict[str, list[float]]:
    """Run each framework's chunk once per round, in the dict's order (A B A B ...), for ``repeats``
    rounds, each after ``settle`` seconds of quiet; returns each one's results, round by round."""
    samples: dict[str, list[float]] = {name: [] for name in chunks}
    for _ in range(repeats):
        for name, chunk in chunks.items():
            time.sleep(settle)
            samples[name].append(chunk())
    return samples


def summarize(samples: dict[str, list[float]]) -> dict[str, float | None]:
    """Median ms/step of each framework from seconds per step, and minitensor / PyTorch of the medians
    (None without PyTorch)."""
    ms = {name: 1e3 * statistics.median(values) for name, values in samples.items()}
    ratio = ms[MINITENSOR] / ms[PYTORCH] if PYTORCH in ms else None
    return {"minitensor_ms": ms[MINITENSOR], "pytorch_ms": ms.get(PYTORCH), "ratio": ratio}


def amp_summary(samples: dict[str, list[float]], fp32: dict[str, Any]) -> dict[str, float | None]:
    """The AMP workers' medians and minitensor / PyTorch ratio (``summarize``), and each framework's AMP
    speedup: its float32 median (``fp32``, summarize's result) over its AMP median."""
    amp: dict[str, float | None] = dict(summarize({label.removesuffix(AMP_SUFFIX): values
                                                   for label, values in samples.items() if label.endswith(AMP_SUFFIX)}))
    for fw in ("minitensor", "pytorch"):
        fast, slow = amp[f"{fw}_ms"], fp32[f"{fw}_ms"]
        amp[f"{fw}_speedup"] = slow / fast if fast and slow is not None else None
    return amp


def auto_steps(seconds: float, target: float = CHUNK_SECONDS, least: int = 3) -> int:
    """Steps per chunk for steps of ``seconds`` each to last about ``target`` seconds (at least ``least``)."""
    return max(least, math.ceil(target / seconds)) if seconds > 0 else least


def losses_disagree(ours: dict[str, float], theirs: dict[str, float], rtol: float) -> str | None:
    """None when every loss agrees within ``rtol``, else which ones differ and how."""
    bad = [f"{k}: minitensor {ours[k]:.7g}, PyTorch {theirs[k]:.7g}" for k in ours
           if not math.isclose(ours[k], theirs[k], rel_tol=rtol)]
    return "; ".join(bad) if bad else None


def first_losses_mismatch(first: dict[str, dict[str, float]], rtol: float) -> str | None:
    """None when minitensor's first losses agree with PyTorch's (float32 within ``rtol``, AMP within AMP_RTOL;
    ``first`` by worker label), else what differs."""
    found = []
    for suffix, tol in (("", rtol), (AMP_SUFFIX, AMP_RTOL)):
        pair = [first.get(fw + suffix) for fw in (MINITENSOR, PYTORCH)]
        bad = pair[0] is not None and pair[1] is not None and losses_disagree(pair[0], pair[1], tol)
        if bad:
            found.append(f"{suffix.strip() or 'float32'} beyond rtol {tol:g}: {bad}")
    return "; ".join(found) or None


# ------------------------------------------------------------------------------------------- a workload
def variants(with_torch: bool, amp: bool) -> dict[str, tuple[str, bool]]:
    """The workers of a workload, label -> (framework, under AMP): each framework in float32, and with
    ``amp`` each one again under AMP (labelled with AMP_SUFFIX), in the order they alternate."""
    frameworks = (MINITENSOR, PYTORCH) if with_torch else (MINITENSOR,)
    return {fw + suffix: (fw, on) for suffix, on in (("", False), (AMP_SUFFIX, True))[:1 + amp] for fw in frameworks}


def compare_workload(name: str, args: argparse.Namespace, with_torch: bool) -> dict[str, Any]:
    """Both frameworks on ``name`` (and with --amp both again under AMP): first losses, alternating timings,
    peak memory; one result row, the AMP figures under its "amp" key."""
    row: dict[str, Any] = {"workload": name, "batch": args.batch_size or workloads.BATCH_SIZES[name],
                           "repeats": args.repeats}
    snapshot = workloads.build(name, args.device, args.seed, args.batch_size).snapshot() if with_torch else None
    workers: dict[str, Worker] = {}
    try:
        for label, (fw, amp) in variants(with_torch, args.amp).items():
            workers[label] = Worker(fw, name, args.device, args.seed, args.threads,
                                    snapshot if fw == PYTORCH else None, amp, args.batch_size,
                                    env=isa.environment(args.isa))
        row["kernels"] = {label: w.call("kernels") for label, w in workers.items()}
        wrong = args.isa and [f"{label}: {bad}" for label, found in row["kernels"].items()
                              if (bad := isa.mismatch(args.isa, found, isa.host_has_avx512()))]
        if wrong:
            row["error"] = f"the kernels that ran are not the ones asked for ({'; '.join(wrong)}), so it was not timed"
            return row
        row["first_losses"] = {label: w.call("first_losses") for label, w in workers.items()}
        mismatch = first_losses_mismatch(row["first_losses"], args.rtol)
        if mismatch:
            row["error"] = f"first losses disagree ({mismatch}), so it was not timed"
            return row
        warm = [w.call("seconds_per_step", max(args.warmup, 1)) for w in workers.values()]
        row["steps"] = args.steps or auto_steps(max(warm))
        samples = alternate({fw: (lambda w=w: w.call("seconds_per_step", row["steps"])) for fw, w in workers.items()},
                            args.repeats, args.settle)
        fp32 = summarize({label: v for label, v in samples.items() if not label.endswith(AMP_SUFFIX)})
        row.update(fp32, samples_ms={label: [1e3 * s for s in v] for label, v in samples.items()})
        if args.amp:
            row["amp"] = amp_summary(samples, fp32)
        row["threads"] = {label: w.call("threads") for label, w in workers.items()}
        if not args.no_memory:
            row["memory"] = {label: w.call("peak_memory") for label, w in workers.items()}
            for target, suffix in ((row, ""), (row.get("amp"), AMP_SUFFIX)):
                if target is not None:
                    target["minitensor_peak_mib"] = row["memory"][MINITENSOR + suffix]["peak_mib"]
                    target["pytorch_peak_mib"] = row["memory"][PYTORCH + suffix]["peak_mib"] if with_torch else None
        return row
    finally:
        for w in workers.values():
            w.close()


# ------------------------------------------------------------------------------------------------ report
def machine(args: argparse.Namespace, with_torch: bool) -> dict[str, Any]:
    """What the figures depend on: hardware, versions, threads, BLAS and the load."""
    info: dict[str, Any] = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "device": args.device,
        "cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
        "platform": platform.platform(), "minitensor": mt.__version__,
        "numpy": np.__version__, "threads": args.threads, "amp": args.amp, "isa": args.isa,
        "isa_environment": isa.environment(args.isa),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "loadavg_start": _loadavg(), "cpu_info": mt.backends.cpu_info().as_dict(),
    }
    if with_torch:
        info["torch"] = importlib.metadata.version("torch")
    if args.device == "cuda":
        info["gpu"] = _gpu_name()
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _gpu_name() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                              capture_output=True, text=True, timeout=30).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def _loadavg() -> str | None:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


TABLE_HEADER = ("| workload | batch | minitensor ms/step | PyTorch ms/step | minitensor / PyTorch "
                "| minitensor peak MiB | PyTorch peak MiB | memory ratio |")


AMP_HEADER = ("| workload | batch | minitensor fp32 ms/step | minitensor AMP ms/step | minitensor AMP speedup "
              "| PyTorch fp32 ms/step | PyTorch AMP ms/step | PyTorch AMP speedup | minitensor AMP / PyTorch AMP "
              "| minitensor AMP peak MiB | PyTorch AMP peak MiB |")


def amp_markdown(rows: list[dict[str, Any]], device: str) -> list[str]:
    """--amp's table: each framework's float32 and AMP ms/step side by side, its AMP speedup (float32 / AMP),
    minitensor AMP / PyTorch AMP, and the AMP peaks; nothing when no row was run with --amp."""
    if not any("amp" in row for row in rows):
        return []
    dtype = "float16" if device == "cuda" else "bfloat16"
    lines = ["", f"Mixed precision (autocast in {dtype}): minitensor as the examples' --amp (GradScaler on every "
             "device), PyTorch by its recipe (GradScaler on cuda only). Speedup: the framework's float32 ms/step "
             "over its AMP ms/step (above 1: AMP is faster).", "", AMP_HEADER, "| --- " + "| ---: " * 10 + "|"]
    for row in rows:
        amp = row.get("amp")
        if amp is None:
            lines.append(f"| {TITLES[row['workload']]} | {row['batch']} |" + " - |" * 9)
            continue
        cells = [row["minitensor_ms"], amp["minitensor_ms"], amp["minitensor_speedup"], row["pytorch_ms"],
                 amp["pytorch_ms"], amp["pytorch_speedup"], amp["ratio"]]
        peaks = [amp.get("minitensor_peak_mib"), amp.get("pytorch_peak_mib")]
        lines.append(f"| {TITLES[row['workload']]} | {row['batch']} | " + " | ".join(map(_number, cells))
                     + " | " + " | ".join(_number(v, 1) for v in peaks) + " |")
    return lines


def markdown(rows: list[dict[str, Any]], info: dict[str, Any]) -> str:
    """The results as a Markdown table, with the machine and the conditions above it, --amp's table below it
    and any skipped workload's reason below that."""
    cpu = info["cpu_info"]
    blas = f"{cpu['blas']}, {cpu['coretype']} kernels chosen by {cpu['chosen_by']}, Numba {cpu['numba'] or 'off'}"
    threads = info["threads"] if info["threads"] is not None else "each library's default"
    if info.get("isa"):
        blas = f"in the workers, --isa {info['isa']}: " + kernels_text(info.get("kernels") or {})
    lines = [
        f"{info['date']}, device {info['device']}" + (f" ({info['gpu']})" if "gpu" in info else "")
        + f"; {info['cpu']}, {info['cores']} cores; threads: {threads}; load average (1, 5, 15 min) "
        f"{info['loadavg_start']} at the start, {info.get('loadavg_end')} at the end.",
        "",
        f"minitensor {info['minitensor']}, Python {info['python']}, NumPy {info['numpy']}"
        + (f" ({blas})" if blas else "") + (f", PyTorch {info['torch']}" if "torch" in info else "")
        + (f", OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']}" if info["OPENBLAS_CORETYPE"] and not info.get("isa")
           else "")
        + (f". Slower BLAS kernels than this CPU allows: {cpu['missed']}" if cpu["missed"] and not info.get("isa")
           else "")
        + ". ms/step: median of the rounds, frameworks alternated; peak memory: see benchmarks/compare.py.",
        "",
        TABLE_HEADER,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    notes = []
    for row in rows:
        title = TITLES[row["workload"]]
        if "error" in row:
            lines.append(f"| {title} | {row['batch']} | - | - | - | - | - | - |")
            notes.append(f"{title}: {row['error']}.")
            continue
        mem_mt, mem_pt = row.get("minitensor_peak_mib"), row.get("pytorch_peak_mib")
        mem_ratio = mem_mt / mem_pt if mem_mt is not None and mem_pt else None
        lines.append(f"| {title} | {row['batch']} | {_number(row['minitensor_ms'])} | {_number(row['pytorch_ms'])} "
                     f"| {_number(row['ratio'])} | {_number(mem_mt, 1)} | {_number(mem_pt, 1)} "
                     f"| {_number(mem_ratio)} |")
    return "\n".join(lines + amp_markdown(rows, info["device"]) + ([""] + notes if notes else [])) + "\n"


def kernels_text(kernels: dict[str, dict[str, Any]]) -> str:
    """The kernels each worker ran (``isa.probe``'s findings, by worker label), for the Markdown header."""
    parts = []
    for label, found in kernels.items():
        numba = found.get("numba_cpu") and f"Numba {found['numba_cpu']} ({'zmm' if found['numba_zmm'] else 'no zmm'})"
        torch = "aten" in found and f"ATen {found['aten']}, oneDNN {found['onednn']}, MKL: {found['mkl']}"
        parts.append(f"{label}: " + ", ".join(filter(None, [f"OpenBLAS {found.get('openblas')}", numba, torch])))
    return "; ".join(parts) or "not probed"


def print_row(row: dict[str, Any]) -> None:
    title = TITLES[row["workload"]]
    if "error" in row:
        print(f"{title}: {row['error']}", file=sys.stderr, flush=True)
        return
    line = f"{title:6} minitensor {row['minitensor_ms']:8.3f} ms/step"
    if row["pytorch_ms"] is not None:
        line += f"   PyTorch {row['pytorch_ms']:8.3f} ms/step   ratio {row['ratio']:5.2f}"
    if "memory" in row:
        line += "   peak " + ", ".join(f"{fw} {m['peak_mib']:.1f} MiB" for fw, m in row["memory"].items())
    print(f"{line}   ({row['repeats']} rounds of {row['steps']} steps)", flush=True)
    if "amp" in row:
        amp = row["amp"]
        line = f"{'':6} AMP: minitensor {amp['minitensor_ms']:8.3f} ms/step ({amp['minitensor_speedup']:.2f}x fp32)"
        if amp["pytorch_ms"] is not None:
            line += (f"   PyTorch {amp['pytorch_ms']:8.3f} ms/step ({amp['pytorch_speedup']:.2f}x fp32)"
                     f"   AMP ratio {amp['ratio']:5.2f}")
        print(line, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Compare, print, write the files asked for; exit status 1 when a workload's losses disagreed."""
    args = parse_args(argv)
    with_torch = torch_workloads.available(args.device)
    if not with_torch:
        print(f"PyTorch is not installed here, or cannot use {args.device}: timing minitensor alone", file=sys.stderr)
    info = machine(args, with_torch)
    precision = "AMP beside float32" if args.amp else "float32"
    print(f"device {args.device}; threads {args.threads or 'default'}; {precision}; "
          f"load average {info['loadavg_start']}", flush=True)
    rates = [bounds.measure_rates(args.threads or 2, isa.environment(args.isa))] if args.bound else []
    rows = []
    for name in args.workloads:
        rows.append(compare_workload(name, args, with_torch))
        info["kernels"] = info.get("kernels") or rows[-1].get("kernels")
        print_row(rows[-1])
    if args.bound:  # the rates before and after the workloads: they see the run's load, as its timings do
        info["rates"] = bounds.combine(*rates, bounds.measure_rates(args.threads or 2, isa.environment(args.isa)))
        print(f"sgemm {info['rates']['sgemm_gflops']:.1f} GFLOP/s, memcpy {info['rates']['memcpy_gbps']:.1f} GB/s "
              f"(OpenBLAS {info['rates']['openblas']} kernels)", flush=True)
        for row in rows:
            row["bound"] = bounds.bound(row["workload"], row["batch"], info["rates"], row)
            print(f"{TITLES[row['workload']]:12} bound {row['bound']['bound_ms']:8.2f} ms", flush=True)
    info["loadavg_end"] = _loadavg()
    print(f"load average at the end: {info['loadavg_end']}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"machine": info, "results": rows}, indent=2))
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(markdown(rows, info) + (bounds.markdown(rows, info) if args.bound else ""))
    return 1 if any("error" in row for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
