"""``export_chrome_trace``: the events as Chrome's Trace Event Format (JSON), which chrome://tracing,
Perfetto (ui.perfetto.dev) and TensorBoard open.

Each event is a complete ("X") event: ``ts`` its start and ``dur`` its length in microseconds, on the
track of its process and thread, so the viewer nests children inside their parents by time. Kernels that
ran on a CUDA device appear a second time on a "CUDA" track, at the time they ran there (their launch
stays inside their op on the thread's track).
"""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

DEVICE_PID = 0  # the track of the CUDA device (a process id the OS never gives a user process)


def _args(e: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"External id": e.id}
    if e.input_shapes:
        args["Input Dims"], args["Input type"] = e.input_shapes, e.input_dtypes
    if e.allocated or e.freed:
        args["Allocated bytes"], args["Freed bytes"] = e.allocated, e.freed
    if e.device_memory_usage:
        args["CUDA memory change"] = e.device_memory_usage
    if e.device_time_total:
        args["device time us"] = round(e.device_time_total, 3)
    if e.stack:
        args["stack"] = e.stack
    return args


def trace_events(events: Sequence[Any]) -> list[dict[str, Any]]:
    """The trace's event dicts: metadata naming the tracks, then one "X" event per recorded event."""
    pid = os.getpid()
    threads = sorted({e.thread for e in events})
    out: list[dict[str, Any]] = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                                  "args": {"name": "python"}}]
    out += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": f"thread {t} (python)"}}
            for t in threads]
    on_device = [e for e in events if e.device_type == "CUDA" and e.device_start_us is not None]
    if on_device:
        out.append({"ph": "M", "name": "process_name", "pid": DEVICE_PID, "tid": 0, "args": {"name": "CUDA"}})
    for e in events:
        out.append({"ph": "X", "cat": e.kind, "name": e.name, "pid": pid, "tid": e.thread,
                    "ts": round(e.start_ns / 1e3, 3), "dur": round((e.end_ns - e.start_ns) / 1e3, 3),
                    "args": _args(e)})
    for e in on_device:
        out.append({"ph": "X", "cat": "kernel", "name": e.name, "pid": DEVICE_PID, "tid": 0,
                    "ts": round(e.device_start_us, 3), "dur": round(e.device_time_total, 3),
                    "args": {"External id": e.id}})
    return out


def export_chrome_trace(events: Sequence[Any], path: str) -> None:
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": trace_events(events)}, f)
