"""``key_averages().table()``: PyTorch's text table (``torch.autograd.profiler_util._build_table``), same
columns, widths, units and footer, so tables from the two read alike.

Percentages are shares of the *self* CPU (or CUDA) time summed over every event of the list, shown or not.

``bandwidth=True`` (ours) adds two columns: "GB/s", an event's bytes moved (``bytes_moved``: what it read
and wrote) over its total CPU time, and "< memcpy/2", marked "SLOW" where that rate is under half of this
machine's memcpy rate (``memcpy_gbps``, measured once) and the event moved at least a MiB per call. The
rule it checks: a memory-bound op (elementwise, pooling, casts, optimizer updates) runs at memory speed. A
GEMM-bound op (a convolution, a linear layer) moves few bytes per flop, and a low rate there says nothing.
"""
from __future__ import annotations

import functools
import time
from typing import Any, Sequence

import numpy as np

COLUMN = 12  # PyTorch's DEFAULT_COLUMN_WIDTH
SPACING = 2


def format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    for size, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def format_share(us: float, total: float) -> str:
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


SLOW_MIN_BYTES = 2 ** 20  # per call: below this an op's fixed cost decides its rate, not memory


@functools.cache
def memcpy_gbps(nbytes: int = 2 ** 25) -> float:
    """This machine's copy rate in GB/s (bytes read + written per second, as ``bytes_moved`` counts them): the
    best of five ``np.copyto`` of ``nbytes``, measured on first use."""
    source = np.ones(nbytes, dtype=np.uint8)
    target = np.empty_like(source)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(target, source)
        best = min(best, time.perf_counter() - start)
    return 2 * nbytes / best / 1e9


def bandwidth_cells(e: Any, memcpy: float) -> list[str]:
    """The "GB/s" and "< memcpy/2" cells of one row."""
    if not e.bytes_moved or not e.cpu_time_total:
        return ["-", ""]
    rate = e.bytes_moved / e.cpu_time_total / 1e3  # bytes per us -> GB/s
    slow = rate < memcpy / 2 and e.bytes_moved / max(e.count, 1) >= SLOW_MIN_BYTES
    return [f"{rate:.2f}", "SLOW" if slow else ""]


def _sort_key(sort_by: str) -> str:
    return sort_by.replace("cuda", "device")  # PyTorch reads its CUDA keys as the device fields


def build_table(events: Sequence[Any], sort_by: str | None, row_limit: int, max_name_column_width: int,
                max_shapes_column_width: int, header: str | None, top_level_events_only: bool,
                use_device: bool, profile_memory: bool, bandwidth: bool = False) -> str:
    """The table text. An unknown ``sort_by`` raises AttributeError naming it, as PyTorch's."""
    if not events:
        return ""
    if sort_by is not None:
        attribute = _sort_key(sort_by)
        events = sorted(events, key=lambda e: getattr(e, attribute), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_device_time = use_device and any(e.device_time_total for e in events)
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"] + (["CUDA Mem", "Self CUDA Mem"] if use_device else [])
    if bandwidth:
        headers += ["GB/s", "< memcpy/2"]
    headers.append("# of Calls")
    widths = [name_width] + [COLUMN] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join(f"{{: >{w}}}" + " " * SPACING for w in widths)
    separator = "".join("-" * w + " " * SPACING for w in widths)
    line_length = sum(widths) + SPACING * (len(widths) - 1)

    self_cpu = sum(e.self_cpu_time_total for e in events)
    self_device = sum(e.self_device_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, format_share(e.self_cpu_time_total, self_cpu), format_time(e.self_cpu_time_total),
               format_share(e.cpu_time_total, self_cpu), format_time(e.cpu_time_total), format_time(e.cpu_time)]
        if has_device_time:
            row += [format_time(e.self_device_time_total), format_share(e.self_device_time_total, self_device),
                    format_time(e.device_time_total), format_time(e.device_time)]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if use_device:
                row += [format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)]
        if bandwidth:
            row += bandwidth_cells(e, memcpy_gbps())
        row.append(e.count)
        if has_shapes:
            shapes = str(e.input_shapes)
            row.append(shapes if len(shapes) < shapes_width else shapes[:shapes_width - 3] + "...")
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {format_time(self_cpu)}"]
    if bandwidth:
        lines.append(f"memcpy: {memcpy_gbps():.2f} GB/s (SLOW: a memory-bound op under half of it)")
    if has_device_time:
        lines.append(f"Self CUDA time total: {format_time(self_device)}")
    return "\n".join(lines) + "\n"
