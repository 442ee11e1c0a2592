"""speedup.py's charts, drawn with matplotlib's Agg canvas (no window, no pyplot state): a bar chart of
samples/s per model and device, and the batch-size sweep. Every chart is FIGSIZE at DPI pixels."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter

FIGSIZE, DPI = (9.0, 4.0), 100  # 900 x 400 pixels
COLOURS = {"cpu": "tab:blue", "cuda": "tab:green"}

Rows = Sequence[dict[str, Any]]  # speedup.Measurement rows as dictionaries (speedup.json's "results")


def bar_chart(rows: Rows, note: str | None, path: Path) -> Path:
    """One panel per model: a bar per device, its height samples/s, labelled with ms/step and (off the
    CPU) the speedup."""
    fig, panels = _figure(rows)
    for ax, model in zip(panels, _models(rows)):
        mine = [r for r in rows if r["model"] == model]
        bars = ax.bar([r["device"] for r in mine], [r["samples_per_s"] for r in mine],
                      color=[COLOURS.get(r["device"], "tab:gray") for r in mine])
        labels = [f"{r['ms_per_step']:.2f} ms/step" + ("" if r["device"] == "cpu" or r["speedup"] is None
                                                  else f"\n{r['speedup']:.2f}x") + "\n" + _losses(r) for r in mine]
        ax.bar_label(bars, labels, fontsize=8)
        ax.margins(y=0.4)  # room for the labels above the tallest bar
        ax.set_title(f"{model} (batch {mine[0]['batch_size']})", fontsize=10)
    panels[0].set_ylabel("samples/s")
    _finish(fig, "minitensor training throughput", note, path)
    return path


def sweep_chart(rows: Rows, crossover: dict[str, int | None] | None, path: Path) -> Path:
    """One panel per model: samples/s against the batch size (log-log), a line per device, and a dashed
    line at the crossover when there is one."""
    fig, panels = _figure(rows)
    for ax, model in zip(panels, _models(rows)):
        for device in dict.fromkeys(r["device"] for r in rows):
            mine = [r for r in rows if r["model"] == model and r["device"] == device]
            ax.plot([r["batch_size"] for r in mine], [r["samples_per_s"] for r in mine], marker="o",
                    color=COLOURS.get(device, "tab:gray"), label=device)
        size = (crossover or {}).get(model)
        if size is not None:
            ax.axvline(size, color="gray", linestyle="--", linewidth=1, label=f"GPU ahead from {size}")
        ax.set_xscale("log", base=2)
        sizes = sorted({r["batch_size"] for r in rows})
        ax.set_xticks(sizes, [str(b) for b in sizes])
        ax.minorticks_off()
        ax.set_yscale("log")
        for axis_formatter in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
            axis_formatter(LogFormatter(labelOnlyBase=False))  # 2000, not 2 x 10^3
        ax.set_xlabel("batch size")
        ax.set_title(model, fontsize=10)
        ax.legend(fontsize=7)
    panels[0].set_ylabel("samples/s")
    _finish(fig, "Throughput against batch size (each batch moved from the host)", None, path)
    return path


def _losses(row: dict[str, Any]) -> str:
    """'loss 2.30 → 0.41' (the GAN's D/G), from the first to the last timed step."""
    def text(losses: dict[str, float]) -> str:
        return "/".join(f"{v:.3g}" for v in losses.values())
    return f"loss {text(row['loss_start'])} → {text(row['loss_end'])}" if row.get("loss_start") else ""


def _models(rows: Rows) -> list[str]:
    return list(dict.fromkeys(r["model"] for r in rows))


def _figure(rows: Rows) -> tuple[Figure, list[Any]]:
    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    return fig, list(fig.subplots(1, len(_models(rows)), squeeze=False)[0])


def _finish(fig: Figure, title: str, note: str | None, path: Path) -> None:
    fig.suptitle(title + ("\n" + textwrap.fill(note, 110) if note else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)  # not bbox_inches="tight": the size stays FIGSIZE * DPI
