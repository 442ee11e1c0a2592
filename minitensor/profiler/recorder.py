"""The hook object: while a profile records, ``autograd.function.profiler`` is a ``Recorder`` and every
``Function.apply``, backward node (``autograd/engine.py``), ``record_function`` range and launch of our
compiled kernels (``backends/compiled.run_kernel``) reports to it; when no profile records, the hook is None
and each of those sites pays one global read.

Only the thread that started the profile is recorded: other threads' ops see ``wants()`` False and run
as they are (DataLoader worker threads included). Events nest by a stack: an op opened while a range is
open is its child, a kernel launched inside an op is the op's child.

Memory (``profile_memory``): on the CPU an op is charged the ``nbytes`` of the arrays it hands out that own
their memory (outputs, arrays it saved for backward, a backward node's gradients), and a ``weakref``
finalizer charges the release of each such array, as a negative amount, to the event open when it is freed
(temporaries an op makes and drops inside itself are not seen). On CUDA an op is charged the change of
CuPy's pool ``used_bytes`` over it, which counts temporaries that are still held when it returns.
"""
from __future__ import annotations

import itertools
import threading
import time
import traceback
import weakref
from typing import Any, Callable

import numpy as np

from .events import FunctionEvent
from ..autograd import function as _function

_get_ident = threading.get_ident
_now = time.perf_counter_ns
_base_apply = _function.ArrayFunction.apply.__func__  # type: ignore[attr-defined]


def _cuda() -> Any:
    from ..backends.cuda import runtime
    return runtime


def _arrays(value: Any) -> list[Any]:
    """The backend arrays in an op's result: tensors' arrays, arrays, in (nested) tuples. NumPy scalars (a
    reduction's result an op saved) are not counted: they hold no allocation a weak reference could follow."""
    if isinstance(value, tuple):
        return [a for v in value for a in _arrays(v)]
    array = getattr(value, "array", value) if isinstance(value, _function._Tensor) else value
    return [array] if hasattr(array, "nbytes") and hasattr(array, "base") and not isinstance(array, np.generic) \
        else []


def _nbytes(values: Any) -> int:
    """The bytes of the arrays (and tensors' arrays) in ``values``, a tuple or list of them, nested or not:
    what an event reads and writes, for the table's GB/s. One pass, no recursion for flat tuples (it runs
    several times per op while a profile records)."""
    if not isinstance(values, (tuple, list)):
        values = (values,)
    total = 0
    for v in values:
        if isinstance(v, (tuple, list)):
            total += _nbytes(v)
            continue
        if isinstance(v, _function._Tensor):
            v = v.array
        n = getattr(v, "nbytes", 0)
        if type(n) is int:
            total += n
    return total


def _describe(args: Any) -> tuple[list[list[int]], list[str]]:
    """(shapes, dtype names) of an op's arguments, [] and "Scalar" for what is not an array or tensor,
    as PyTorch's ``input_shapes``."""
    shapes, dtypes = [], []
    for a in args:
        shape = getattr(a, "shape", None)
        shapes.append(list(shape) if shape is not None else [])
        dtype = getattr(a, "dtype", None)
        dtypes.append(str(dtype).replace("minitensor.", "") if dtype is not None else "Scalar")
    return shapes, dtypes


class Recorder:
    """Collects ``FunctionEvent``s for one recording period of a ``profile``."""

    def __init__(self, record_shapes: bool, profile_memory: bool, use_device: bool, with_stack: bool) -> None:
        self.thread = _get_ident()
        self.native_thread = threading.get_native_id()  # the OS's id, which trace viewers show
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.use_device = use_device and _cuda().is_available()
        self.stack: list[FunctionEvent] = []
        self.events: list[FunctionEvent] = []
        self.bypass = False  # set by ``op`` just before it runs Function.apply's body through the hook
        self.active = True
        self._ids = itertools.count()
        self._incoming: dict[int, int] = {}  # backward event id -> id of the gradient it was given
        self._finalizers: list[weakref.finalize] = []  # detached at the end: they would keep the events alive
        self.origin_us = _now() / 1e3
        self.device_origin = _cuda().timing_event() if self.use_device else None

    # ------------------------------------------------------------------------------------ the stack
    def wants(self) -> bool:
        """Whether the calling ``Function.apply`` should be recorded (a re-entry from ``op`` is not)."""
        if _get_ident() != self.thread:
            return False
        if self.bypass:
            self.bypass = False
            return False
        return True

    def on_thread(self) -> bool:
        return _get_ident() == self.thread and self.active

    def open(self, name: str, kind: str, inputs: Any = None) -> FunctionEvent:
        stack = self.stack
        parent = stack[-1] if stack else None
        event = FunctionEvent(next(self._ids), name, kind, self.native_thread, 0, parent)
        if parent is not None:
            parent.cpu_children.append(event)
        if inputs is not None and self.record_shapes:
            event.input_shapes, event.input_dtypes = _describe(inputs)
        self.events.append(event)
        stack.append(event)
        event.start_ns = _now()  # last: the bookkeeping above is the parent's time
        return event

    def close(self, event: FunctionEvent) -> None:
        event.end_ns = _now()
        stack = self.stack
        while stack:  # an exception may have skipped the close of inner events
            inner = stack.pop()
            inner.end_ns = event.end_ns
            if inner is event:
                break

    # ------------------------------------------------------------------------------- the hook sites
    def op(self, cls: type, args: tuple, kwargs: dict, run: Callable[..., Any] = _base_apply) -> Any:
        """Run ``cls.apply(*args, **kwargs)`` (``run(cls, ...)``: the array-level apply, or a custom
        Function's) as one recorded event named after the Function."""
        device = next((a._device for a in args if isinstance(a, _function._Tensor)), None)
        on_cuda = device is not None and device.type == "cuda"
        # the caller's frames, innermost first as PyTorch's, without this one and apply's (read before the
        # op's clock starts)
        stack = [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(traceback.extract_stack()[:-2])] \
            if self.with_stack else []
        event = self.open(cls.__name__, "cpu_op", args)
        event.stack = stack
        event.bytes_moved = _nbytes(args)
        self._start_device(event, on_cuda)
        self.bypass = True
        try:
            out = run(cls, *args, **kwargs)
        except BaseException:
            self.bypass = False
            self.close(event)
            raise
        self._end_device(event)
        event.bytes_moved += _nbytes(out)
        if self.profile_memory and not on_cuda:
            grad_fn = getattr(out[0] if isinstance(out, tuple) else out, "grad_fn", None)
            saved = grad_fn._saved if grad_fn is not None and grad_fn._saved else ()
            made = {id(a): a for a in _arrays(out) + _arrays(saved)}  # an output it saved counts once
            for a in args:
                if isinstance(a, _function._Tensor):
                    made.pop(id(a.array), None)
            self._allocated(event, list(made.values()))
        self.close(event)
        return out

    def begin_backward(self, node: Any, grad: Any) -> FunctionEvent | None:
        """Open the event of one backward node (closed by ``end_backward``), or None off this thread."""
        if not self.on_thread():
            return None
        event = self.open(node.name(), "backward", (grad,))
        event.bytes_moved = _nbytes((grad, node._saved or ()))
        self._start_device(event, node._device.type == "cuda")
        self._incoming[event.id] = id(grad)  # its id only: a reference would stop the engine stealing it
        return event

    def end_backward(self, event: FunctionEvent, result: Any) -> None:
        self._end_device(event)
        incoming = self._incoming.pop(event.id)
        event.bytes_moved += _nbytes(result)
        if self.profile_memory and not event.on_cuda:  # a gradient passed through is not new memory
            self._allocated(event, [a for a in _arrays(result) if id(a) != incoming])
        self.close(event)

    def kernel(self, name: str, on_device: bool, kernel: Callable[..., Any], args: tuple) -> None:
        """Launch ``kernel(*args)`` as a child event of the open op (device-timed on CUDA)."""
        if not self.on_thread():
            kernel(*args)
            return
        event = self.open(name, "kernel")
        event.bytes_moved = _nbytes(args)
        timed = on_device and self.use_device
        start = _cuda().timing_event() if timed else None
        kernel(*args)
        if timed:
            event.device_range = (start, _cuda().timing_event())
            event.device_type = "CUDA"
        self.close(event)

    # ------------------------------------------------------------------------------ device and memory
    def _start_device(self, event: FunctionEvent, on_cuda: bool) -> None:
        """Record the op's start on the device and the pool's used bytes before it."""
        event.on_cuda = on_cuda
        if on_cuda and self.use_device:
            event.device_range = _cuda().timing_event()
            event.pool_before = _cuda().memory_allocated() if self.profile_memory else 0

    def _end_device(self, event: FunctionEvent) -> None:
        if event.on_cuda and self.use_device:
            event.device_range = (event.device_range, _cuda().timing_event())
            if self.profile_memory:
                event.device_memory_usage = _cuda().memory_allocated() - event.pool_before

    def _allocated(self, event: FunctionEvent, arrays: list[Any]) -> None:
        for a in arrays:
            if a.base is None and a.nbytes:  # a view allocates nothing
                event.allocated += a.nbytes
                self._finalizers.append(weakref.finalize(a, self._freed, a.nbytes))

    def _freed(self, nbytes: int) -> None:
        if self.active and self.stack and _get_ident() == self.thread:
            self.stack[-1].freed += nbytes

    # ------------------------------------------------------------------------------------- the end
    def finish(self) -> list[FunctionEvent]:
        """Stop recording: close what is open, read the device events (one wait for the device), fill
        every event's totals. Returns the events in start order."""
        self.active = False
        for finalizer in self._finalizers:
            finalizer.detach()
        self._finalizers.clear()
        now = _now()
        for event in self.stack:
            event.end_ns = now
        self.stack.clear()
        timed = [e for e in self.events if isinstance(e.device_range, tuple)]
        if timed:
            runtime = _cuda()
            for e in timed:
                start, end = e.device_range
                end.synchronize()  # waits once, at the first; the rest are done by then or soon
                e.device_time_total = runtime.elapsed_ms(start, end) * 1e3
                e.device_start_us = self.origin_us + runtime.elapsed_ms(self.device_origin, start) * 1e3
        for event in reversed(self.events):  # children start after their parents: finished first
            event.finish()
        return self.events
