"""``torch.utils.benchmark.Compare``: Measurements as tables, one per label: a row per (threads, env,
sub-label or statement), a column per description, the median of the merged replicates in each cell, in one
unit per table; optionally trimmed to each column's significant figures, coloured against the best of the
column (or row), and marked where the spread is wide. The layout is PyTorch's, character for character."""
from __future__ import annotations

import enum
import math
from typing import Sequence

from . import common
from .common import Measurement

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x: float) -> int:
    return math.ceil(math.log10(x))


class _Column:
    """One description's cells: a fixed-width number format shared by the column's rows."""

    def __init__(self, grouped: list[tuple[Measurement | None, ...]], scale: float, trim: bool,
                 highlight_warnings: bool) -> None:
        self.grouped = grouped  # the column's results per thread-count group of rows
        results = [r for group in grouped for r in group if r is not None]
        self.trim = trim
        self.highlight = highlight_warnings and any(r.has_warnings for r in results)
        digits = [_leading_digits(r.median / scale) for r in results]
        decimals = min(max(r.significant_figures - d, 0) for d, r in zip(digits, results)) if trim else 1
        length = max(digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{length}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def num_to_str(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.num_to_str(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        return self.template.format(value, f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None
                                    else "")


class _Row:
    def __init__(self, results: list[Measurement | None], group: int, render_env: bool, env_len: int,
                 scale: float, colorize: Colorize, num_threads: int | None) -> None:
        self.results, self.group, self.render_env, self.env_len = results, group, render_env, env_len
        self.scale, self.colorize, self.num_threads = scale, colorize, num_threads
        self.columns: tuple[_Column, ...] = ()

    def cells(self) -> list[str]:
        first = next(r for r in self.results if r is not None)
        env = (f"({first.env})" if self.render_env else "").ljust(self.env_len + 4)
        out = ["  " + env + first.as_row_name]
        for m, column in zip(self.results, self.columns):
            out.append(column.num_to_str(None, 1, None) if m is None else column.num_to_str(
                m.median / self.scale, m.significant_figures, m.iqr / m.median if m.has_warnings else None))
        return out

    def separator(self, width: int) -> list[str]:
        return [f"{self.num_threads} threads: ".ljust(width, "-")] if self.num_threads is not None else []

    def finalize(self, cells: list[str], widths: list[int]) -> list[str]:
        if self.colorize == Colorize.ROWWISE:
            best: list[float | None] = [min(r.median for r in self.results if r is not None)] * len(cells)
        elif self.colorize == Colorize.COLUMNWISE:
            best = [min((r.median for r in c.grouped[self.group] if r is not None), default=None)
                    for c in self.columns]
        else:
            best = [-1.0] * len(cells)
        row = [cells[0].ljust(widths[0])]
        for text, width, result, best_value in zip(cells[1:], widths[1:], self.results, best):
            text = text.center(width)
            if self.colorize != Colorize.NONE and result is not None and best_value is not None:
                text = _color(text, result.median, best_value)
            row.append(text)
        return row


def _color(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + text + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + text + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + text + TERMINATE * 2
    if value >= best * 2:
        return BAD + text + TERMINATE * 2
    return text


def _table(results: list[Measurement], colorize: Colorize, trim: bool, highlight_warnings: bool) -> str:
    """One label's table."""
    unit, scale = common.select_unit(min(r.median for r in results))
    row_keys = common.ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
    row_keys.sort(key=lambda key: key[:2])  # by threads, then env: statements keep their order
    column_keys = common.ordered_unique(r.description for r in results)
    cells: list[list[Measurement | None]] = [[None] * len(column_keys) for _ in row_keys]
    for r in results:
        cells[row_keys.index((r.num_threads, r.env, r.as_row_name))][column_keys.index(r.description)] = r
    envs = {r.env for r in results}
    render_env = len(envs) > 1
    env_len = max(len(e) for e in envs) if render_env else 0  # type: ignore[arg-type]
    rows: list[_Row] = []
    groups: list[list[list[Measurement | None]]] = []
    prior_threads, prior_env = -1, ""
    for (threads, env, _), line in zip(row_keys, cells):
        new_group = threads != prior_threads
        if new_group:
            prior_threads, prior_env = threads, ""
            groups.append([])
        rows.append(_Row(line, len(groups) - 1, render_env and env != prior_env, env_len, scale, colorize,
                         threads if new_group else None))
        groups[-1].append(line)
        prior_env = env
    columns = tuple(_Column([tuple(line[i] for line in group) for group in groups], scale, trim, highlight_warnings)
                    for i in range(len(column_keys)))
    for row in rows:
        row.columns = columns
    # a column without a description has an empty header (PyTorch's table fails on it with a TypeError)
    strings: list[list[str]] = [["", *(k or "" for k in column_keys)], *(row.cells() for row in rows)]
    n = max(len(s) for s in strings)
    for s in strings:
        s.extend([""] * (n - len(s)))
    widths = [max(len(s) for s in column) for column in zip(*strings)]
    lines = ["  |  ".join(s.center(w) for s, w in zip(strings[0], widths))]
    width = len(lines[0])
    for s, row in zip(strings[1:], rows):
        lines += row.separator(width)
        lines.append("  |  ".join(row.finalize(s, widths)))
    warned = highlight_warnings and any(r.has_warnings for r in results)
    label = results[0].label
    return (f"[{(' ' + (label or '') + ' ').center(width - 2, '-')}]\n" + "\n".join(lines) + "\n\n"
            f"Times are in {common.unit_to_english(unit)}s ({unit}).\n"
            + ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if warned else ""))


class Compare:
    """Tables of Measurements, grouped by label; ``print()`` or ``str()`` them."""

    def __init__(self, results: Sequence[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: Sequence[Measurement]) -> None:
        """Add Measurements (anything else is a ValueError)."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each cell against the best of its column (``rowwise``: of its row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict[str | None, list[Measurement]] = {}
        for r in Measurement.merge(self._results):
            by_label.setdefault(r.label, []).append(r)
        return [_table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings)
                for group in by_label.values()]
