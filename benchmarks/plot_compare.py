"""Draw ms/step per workload, minitensor beside PyTorch, from one or more ``compare.py --json`` files: one
panel per file (a device and thread count), log scale.

    python benchmarks/plot_compare.py docs/perf/2026-11-22-cpu-2threads.json \
        docs/perf/2026-11-22-cpu-1thread.json --out docs/performance.png
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

FRAMEWORKS = (("minitensor", "minitensor_ms", "tab:blue"), ("PyTorch", "pytorch_ms", "tab:orange"))


def panel_title(machine: dict[str, Any]) -> str:
    threads = machine.get("threads")
    return (f"{machine['device']}, {threads if threads is not None else 'default'} thread(s); "
            f"load {machine['loadavg_start'].split()[0]}; {machine['date']}")


def plot(reports: Sequence[dict[str, Any]], out: Path) -> Path:
    """One bar group per workload and panel per report; the ratio minitensor/PyTorch above each group."""
    from matplotlib.figure import Figure  # no pyplot: no display needed

    fig = Figure(figsize=(5 * len(reports), 4), layout="constrained")
    axes = fig.subplots(1, len(reports), squeeze=False)[0]
    for ax, report in zip(axes, reports):
        rows = report["results"]
        positions = range(len(rows))
        for offset, (label, key, color) in zip((-0.2, 0.2), FRAMEWORKS):
            ax.bar([p + offset for p in positions], [r[key] for r in rows], width=0.4, label=label, color=color)
        for p, r in zip(positions, rows):
            ax.annotate(f"{r['ratio']:.2f}x", (p, max(r["minitensor_ms"], r["pytorch_ms"])),
                        textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8)
        ax.set_xticks(list(positions), [f"{r['workload']}\nb{r['batch']}" for r in rows])
        ax.set_yscale("log")
        ax.set_ylabel("ms per training step (lower is better)")
        ax.set_title(panel_title(report["machine"]), fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle("One training step, minitensor beside PyTorch (ratio above each pair)", fontsize=10)
    fig.savefig(out, dpi=100)
    return out


def main(argv: Sequence[str] | None = None) -> Path:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("reports", nargs="+", type=Path, help="JSON files written by compare.py --json")
    p.add_argument("--out", type=Path, default=Path("performance.png"), help="the PNG to write")
    args = p.parse_args(argv)
    return plot([json.loads(path.read_text()) for path in args.reports], args.out)


if __name__ == "__main__":
    print(main())
