"""``torch.autograd.profiler``: PyTorch's legacy profiler API (``profile(use_cuda=...)``, ``record_function``)
on ``minitensor.profiler``'s recorder (docs/profiling.md): the same events, key averages and tables."""
from __future__ import annotations

from typing import Any

from ..profiler import EventList, FunctionEvent, FunctionEventAvg, ProfilerActivity, record_function
from ..profiler import profile as _profile

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]


class profile:
    """``with torch.autograd.profiler.profile() as prof: ...`` then ``prof.key_averages().table(...)``,
    ``prof.function_events``, ``prof.export_chrome_trace(path)``. ``enabled=False`` records nothing;
    ``use_cuda`` / ``use_device="cuda"`` add the device activity (kernel launches)."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        self.enabled = enabled
        activities = {ProfilerActivity.CPU} if use_cpu else set()
        if use_cuda or (use_device is not None and str(use_device).startswith("cuda")):
            activities.add(ProfilerActivity.CUDA)
        self._prof = _profile(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                              with_stack=with_stack, with_flops=with_flops, with_modules=with_modules) \
            if enabled else None
        self.function_events: EventList | None = None
        self.entered = False

    def __enter__(self) -> "profile":
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        if self._prof is not None:
            self._prof.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._prof is not None:
            self._prof.stop()
            self.function_events = self._prof.events()

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        return self._events().key_averages(group_by_input_shape)

    def table(self, *args: Any, **kwargs: Any) -> str:
        return self._events().table(*args, **kwargs)

    def total_average(self) -> FunctionEventAvg:
        return self._events().total_average()

    def export_chrome_trace(self, path: str) -> None:
        self._events().export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def __str__(self) -> str:
        return self.table()
