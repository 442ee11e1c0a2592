"""Draw each workload's step as a multiple of its bound (``bounds.py``), minitensor beside PyTorch, with the
issue #28 target as a tick: one panel per ``compare.py --bound --json`` file (e.g. one per --isa).

    python benchmarks/plot_bounds.py docs/perf/2026-11-28-cpu-*/avx2.json docs/perf/2026-11-28-cpu-*/native.json \
        --out docs/perf/bounds.png
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

BARS = (("minitensor", "minitensor_over_bound", "tab:blue"), ("PyTorch", "pytorch_over_bound", "tab:orange"))


def panel_title(machine: dict[str, Any]) -> str:
    rates = machine["rates"]
    return (f"--isa {machine.get('isa') or 'unset'}, {machine.get('threads')} threads; sgemm "
            f"{rates['sgemm_gflops']:.0f} GFLOP/s ({rates['openblas']}), memcpy {rates['memcpy_gbps']:.0f} GB/s; "
            f"load {machine['loadavg_start'].split()[0]}")


def plot(reports: Sequence[dict[str, Any]], out: Path) -> Path:
    """One bar pair per timed workload (step / bound, log scale), the target / bound as a black tick."""
    from matplotlib.figure import Figure  # no pyplot: no display needed

    fig = Figure(figsize=(6 * len(reports), 4.5), layout="constrained")
    axes = fig.subplots(1, len(reports), squeeze=False)[0]
    for ax, report in zip(axes, reports):
        rows = [r for r in report["results"] if "bound" in r and "error" not in r]
        positions = range(len(rows))
        for offset, (label, key, color) in zip((-0.2, 0.2), BARS):
            ax.bar([p + offset for p in positions], [r["bound"][key] or 0 for r in rows], width=0.4, label=label,
                   color=color)
        ax.scatter(list(positions), [r["bound"]["target_ms"] / r["bound"]["bound_ms"] for r in rows], marker="_",
                   s=600, color="black", label="target", zorder=3)
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_xticks(list(positions), [f"{r['workload']}\nb{r['batch']}" for r in rows], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("ms per step / bound (1 = the bound)")
        ax.set_title(panel_title(report["machine"]), fontsize=8)
        ax.legend(fontsize=8)
    fig.suptitle("One training step over its bound (GEMM FLOPs / sgemm rate + bytes / memcpy rate)", fontsize=10)
    fig.savefig(out, dpi=100)
    return out


def main(argv: Sequence[str] | None = None) -> Path:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reports", nargs="+", type=Path, help="JSON files written by compare.py --bound --json")
    p.add_argument("--out", type=Path, default=Path("bounds.png"), help="the PNG to write")
    args = p.parse_args(argv)
    return plot([json.loads(path.read_text()) for path in args.reports], args.out)


if __name__ == "__main__":
    print(main())
