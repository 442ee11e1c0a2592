"""``key_averages().table()``: PyTorch's text table (``torch.autograd.profiler_util._build_table``), same
columns, widths, units and footer, so tables from the two read alike.

Percentages are shares of the *self* CPU (or CUDA) time summed over every event of the list, shown or not.
"""
from __future__ import annotations

from typing import Any, Sequence

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


def _sort_key(sort_by: str) -> str:
    return sort_by.replace("cuda", "device")  # PyTorch reads its CUDA keys as the device fields


def build_table(events: Sequence[Any], sort_by: str | None, row_limit: int, max_name_column_width: int,
                max_shapes_column_width: int, header: str | None, top_level_events_only: bool,
                use_device: bool, profile_memory: bool) -> str:
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
        row.append(e.count)
        if has_shapes:
            shapes = str(e.input_shapes)
            row.append(shapes if len(shapes) < shapes_width else shapes[:shapes_width - 3] + "...")
        lines.append(row_format.format(*row))
    lines += [separator, f"Self CPU time total: {format_time(self_cpu)}"]
    if has_device_time:
        lines.append(f"Self CUDA time total: {format_time(self_device)}")
    return "\n".join(lines) + "\n"
