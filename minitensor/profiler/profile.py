"""``profile``, ``schedule``, ``record_function``: PyTorch's ``torch.profiler`` front end.

A ``profile`` moves through the ``ProfilerAction`` of each step that its ``schedule`` gives (PyTorch's
transitions): NONE and WARMUP record nothing (the hooks stay None; there is no tracer to warm up), RECORD
and RECORD_AND_SAVE install a ``Recorder`` as the hooks, and leaving RECORD_AND_SAVE (or the context)
collects the events and calls ``on_trace_ready(prof)``. With a schedule every step is a
``ProfilerStep#N`` range, so the time between ops (Python, the module calls) shows as its self time.

One profile records at a time in a process: the hooks are process-wide globals.
"""
from __future__ import annotations

import contextlib
import enum
import os
import socket
import time
import warnings
from typing import Any, Callable, Iterable

from .events import EventList
from .recorder import Recorder
from ..autograd import function as _function
from ..backends import compiled as _compiled


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set[ProfilerActivity]:
    """CPU, and CUDA when a CUDA device can be used."""
    from ..backends.cuda import runtime
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if runtime.is_available() else set())


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup`` and ``active``
    recorded steps (the last RECORD_AND_SAVE), ``repeat`` times (0: for ever). ``skip_first_wait``: the
    first cycle starts without its wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step = step - skip_first + (wait if skip_first_wait else 0)
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class record_function(contextlib.ContextDecorator):
    """A named range (``with record_function("name"):`` or as a decorator): the ops run inside it are its
    children in the table and the trace. Costs one global read when no profile records."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._open: Any = None

    def __enter__(self) -> "record_function":
        recorder = _function.profiler
        if recorder is not None and recorder.on_thread():
            self._open = (recorder, recorder.open(self.name, "user_annotation"))
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._open is not None:
            recorder, event = self._open
            self._open = None
            if recorder.active:
                recorder.close(event)


_W = "Incorrect schedule: {} followed by {}"
_Step = Callable[["profile"], None]


class profile:
    """PyTorch's ``torch.profiler.profile``: a context manager (or ``start()``/``stop()``) that records ops,
    backward nodes, ranges and kernel launches; ``step()`` advances the schedule. Results:
    ``events()``, ``key_averages()``, ``export_chrome_trace(path)`` (of the last recorded cycle)."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[["profile"], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        unknown = [a for a in self.activities if not isinstance(a, ProfilerActivity)]
        if unknown:
            raise ValueError(f"activities must be ProfilerActivity values, got {unknown}")
        self.use_device = ProfilerActivity.CUDA in self.activities
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules  # accepted; not recorded
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder: Recorder | None = None
        self._events: EventList | None = None
        self._step_range: record_function | None = None
        self._running = False

    # ------------------------------------------------------------------------------------- control
    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        if _running[0] is not None:
            raise RuntimeError("Profiler is already enabled: one profile records at a time in a process "
                               "(stop the running one first)")
        _running[0] = self
        self._running = True
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self) -> None:
        if not self._running:
            raise RuntimeError("Can't stop a profiler that is not running (call start() or use it as a context "
                               "manager)")
        self._exit_step()
        try:
            self._transit(self.current_action, None)
        finally:
            self._stop_trace()  # whatever the schedule's state: the hooks are None after stop
            self._running = False
            _running[0] = None

    def step(self) -> None:
        """Signal that the next step starts: close this step's range, move to the schedule's next action."""
        self._exit_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._enter_step()

    def _enter_step(self) -> None:
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _exit_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    # ---------------------------------------------------------------------------------- transitions
    def _start_trace(self) -> None:
        recorder = Recorder(self.record_shapes, self.profile_memory, self.use_device, self.with_stack)
        self._recorder = recorder
        _function.profiler = recorder
        _compiled.launch_hook = recorder.kernel

    def _stop_trace(self) -> None:
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return
        _function.profiler = None
        _compiled.launch_hook = None
        self._events = EventList(recorder.finish(), self.use_device, self.profile_memory, self.record_shapes)

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _warn(self, before: str, after: str) -> Callable[[], None]:
        return lambda: warnings.warn(_W.format(before, after), stacklevel=3)

    def _transit(self, previous: ProfilerAction, current: ProfilerAction | None) -> None:
        """PyTorch's action map: what to do between two consecutive actions (None: the profile ends)."""
        A = ProfilerAction
        start, stop, ready = self._start_trace, self._stop_trace, self._trace_ready
        actions: dict[tuple[Any, Any], list[Callable[[], None]]] = {
            (A.NONE, A.RECORD): [start], (A.NONE, A.RECORD_AND_SAVE): [start],
            (A.WARMUP, A.RECORD): [start], (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.WARMUP, A.NONE): [self._warn("WARMUP", "NONE")],
            (A.RECORD, A.NONE): [self._warn("RECORD", "NONE"), stop],
            (A.RECORD, A.WARMUP): [self._warn("RECORD", "WARMUP"), stop],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready], (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, start],
            (A.RECORD, None): [stop, ready], (A.RECORD_AND_SAVE, None): [stop, ready],
        }
        for action in actions.get((previous, current), ()):
            action()

    # ------------------------------------------------------------------------------------- results
    def events(self) -> EventList:
        """Every event of the last recorded cycle, in start order."""
        if self._events is None:
            raise AssertionError("the profiler has no results yet: it records in RECORD steps and collects "
                                 "them when the cycle (or the profile) ends")
        return self._events

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)


_running: list[profile | None] = [None]  # the profile between start() and stop(), if any


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None) -> _Step:
    """An ``on_trace_ready`` that writes each cycle's Chrome trace to ``dir_name`` as
    ``<worker_name>.<time_ns>.pt.trace.json`` (worker_name: host_pid), as PyTorch's."""
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(dir_name, f"{name}.{time.time_ns()}.pt.trace.json"))
    return handler
