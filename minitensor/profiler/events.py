"""What a profile records: ``FunctionEvent`` (one op, backward node, ``record_function`` range or kernel launch),
``FunctionEventAvg`` (the events of one key summed) and ``EventList``, with PyTorch's attribute names.

Times are microseconds (floats), as PyTorch's. An event's *total* covers its children; its *self* part is
the total minus its direct children's totals, so the self times of all events add up to the time the
outermost events cover, each instant counted once. Device times (CUDA) are the same on the device's
clock: an op's total is the stream time between CUDA events recorded before and after its launches (see
``recorder.py``), a kernel's that of its own pair, and an op's self device time is what its own launches
(CuPy's, cuBLAS's) took outside our kernels. A range that is not timed itself sums its children.
"""
from __future__ import annotations

from typing import Any, Iterable

# The numeric fields key_averages adds up, each also readable per event.
SUMMED = ("count", "cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
          "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage",
          "bytes_moved")
KINDS = ("cpu_op", "backward", "user_annotation", "kernel")


class _Times:
    """PyTorch's derived attributes, shared by events and averages."""

    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    device_time_total: float
    self_device_time_total: float
    cpu_memory_usage: int
    self_cpu_memory_usage: int
    device_memory_usage: int
    self_device_memory_usage: int
    bytes_moved: int  # ours, not PyTorch's: bytes of the arrays read and written (table(bandwidth=True))
    kind: str

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (us)."""
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self) -> float:
        return self.device_time_total / max(self.count, 1)

    # PyTorch's older CUDA-named spellings of the device fields.
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_memory_usage = property(lambda self: self.device_memory_usage)
    self_cuda_memory_usage = property(lambda self: self.self_device_memory_usage)

    @property
    def is_user_annotation(self) -> bool:
        return self.kind == "user_annotation"


class FunctionEvent(_Times):
    """One recorded interval on the profiling thread. ``start_ns``/``end_ns`` are ``time.perf_counter_ns``
    readings; ``finish`` fills the derived totals once the profile has ended."""

    def __init__(self, id: int, name: str, kind: str, thread: int, start_ns: int,
                 parent: "FunctionEvent | None") -> None:
        self.id, self.name, self.kind, self.thread = id, name, kind, thread
        self.start_ns = self.end_ns = start_ns
        self.cpu_parent = parent
        self.cpu_children: list[FunctionEvent] = []
        self.input_shapes: list[list[int]] = []
        self.input_dtypes: list[str] = []
        self.stack: list[str] = []  # with_stack: "file(line): function" of the calling frames, innermost first
        self.allocated = 0  # CPU bytes of arrays this event made itself (outputs, saved arrays)
        self.freed = 0  # CPU bytes of arrays released while this was the innermost open event
        self.device_memory_usage = 0  # CUDA pool bytes after - before (children included)
        self.device_range: Any = None  # (start, end) CUDA events, read when the profile ends
        self.on_cuda = False  # an op or node that ran on a CUDA device
        self.pool_before = 0  # CuPy pool bytes in use when it began (profile_memory)
        self.device_time_total = 0.0
        self.device_start_us: float | None = None  # when a kernel began on the device (trace time base)
        self.device_type = "CPU"
        self.count = 1
        self.bytes_moved = 0  # an op's inputs and outputs, a node's gradients and saved arrays, a kernel's arrays

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self) -> tuple[float, float]:
        return self.start_ns / 1e3, self.end_ns / 1e3

    def finish(self) -> None:
        """Fill the totals from the children (children first: call on events in reverse start order)."""
        children = self.cpu_children
        self.cpu_time_total = (self.end_ns - self.start_ns) / 1e3
        self.self_cpu_time_total = self.cpu_time_total - sum(c.cpu_time_total for c in children)
        self.self_cpu_memory_usage = self.allocated - self.freed
        self.cpu_memory_usage = self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in children)
        if self.device_range is None and self.kind != "kernel":  # not timed itself: its children's sum
            self.device_time_total = sum(c.device_time_total for c in children)
            self.device_memory_usage = sum(c.device_memory_usage for c in children)
        self.self_device_time_total = self.device_time_total - sum(c.device_time_total for c in children)
        self.self_device_memory_usage = self.device_memory_usage - sum(c.device_memory_usage for c in children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} kind={self.kind} "
                f"cpu_time_total={self.cpu_time_total:.3f}us children={len(self.cpu_children)}>")


class FunctionEventAvg(_Times):
    """The events of one key (and input shapes, when grouped by them) added up."""

    def __init__(self, key: str, kind: str, input_shapes: list[list[int]] | None = None) -> None:
        self.key, self.kind = key, kind
        self.input_shapes = input_shapes if input_shapes is not None else []
        for field in SUMMED:
            setattr(self, field, 0)
        self.cpu_parent = None  # top_level_events_only treats averages as top level, as PyTorch's

    def add(self, other: _Times) -> "FunctionEventAvg":
        for field in SUMMED:
            setattr(self, field, getattr(self, field) + getattr(other, field))
        return self

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us cpu_time_total={self.cpu_time_total:.3f}us>")


class EventList(list):
    """A list of events or averages, with ``key_averages``, ``table`` and ``export_chrome_trace``."""

    def __init__(self, events: Iterable[Any] = (), use_device: bool = False, profile_memory: bool = False,
                 record_shapes: bool = False) -> None:
        super().__init__(events)
        self._use_device, self._profile_memory, self._record_shapes = use_device, profile_memory, record_shapes

    def _like(self, events: Iterable[Any]) -> "EventList":
        return EventList(events, self._use_device, self._profile_memory, self._record_shapes)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False) -> "EventList":
        """One ``FunctionEventAvg`` per key (per key and input shapes with ``group_by_input_shape``), in the
        order the keys first occur."""
        groups: dict[Any, FunctionEventAvg] = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e.key, e.kind, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return self._like(groups.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", "user_annotation")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, bandwidth: bool = False) -> str:
        """PyTorch's text table (see ``table.py``); ``sort_by`` names an attribute, sorted high to low.
        ``bandwidth`` (ours) adds the columns "GB/s" (bytes moved over CPU total time) and "< memcpy/2"."""
        from .table import build_table
        return build_table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                           top_level_events_only, self._use_device, self._profile_memory, bandwidth)

    def export_chrome_trace(self, path: str) -> None:
        from .trace import export_chrome_trace
        export_chrome_trace(self, path)
