"""The backend a backward body gets under ``create_graph=True``: each method records itself (docs/architecture.md,
"Higher-order gradients").

``RecordingBackend`` has every method of ``Backend``. Called without a ``Rec`` facade among its arguments, a
method is the device backend's own (its kernels; constants stay constants). Called with one, it is

- a rule of ``RULES`` (recording_rules.py) where there is one: the forward ops map to their Functions
  (``B.exp`` is ``minitensor.exp``), and the backward-only methods (``conv2d_backward``,
  ``max_pool2d_backward``...) to a small Function whose backward is the method's adjoint;
- else the generic body itself (``backends/generic/``), run on the facades with ``self.xp`` the recording
  array module (recording_xp.py): the activations', losses' and norms' backward methods record themselves;
- and where that body meets something it cannot record, the method computed on raw arrays, its result
  marked ``Underivable``: a node whose own backward raises "double backward of <Op> is not implemented",
  so the error comes at the second backward, and only if a gradient reaches it.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from .function import ArrayFunction
from .recording import Rec, Unrecordable, has_rec, unwrap
from .recording_xp import RecordingXP
from ..backends.base import Backend

__all__ = ["RecordingBackend", "Underivable", "current_node"]

_current: list[Any] = [None]  # the node whose backward runs on the recording backend


def current_node() -> Any:
    return _current[0]


def set_current_node(node: Any) -> Any:
    """Make ``node`` the one whose backward runs (named by the errors); return the previous one."""
    prev, _current[0] = _current[0], node
    return prev


def underivable_message(what: str) -> str:
    node = _current[0]
    op = type(node).__name__ if node is not None else "an op"
    return (f"double backward of {op} is not implemented: its backward uses {what}, which has no "
            "differentiable form (docs/differences.md lists the ops without one)")


class Underivable(ArrayFunction):
    """A value computed without a recorded graph: its backward raises ``message`` (PyTorch's DelayedError)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, *arrays: Any, result: Any, message: str) -> Any:
        ctx.message = message
        return result

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        raise NotImplementedError(ctx.message)


def _underivable(name: str, B: "RecordingBackend", args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``B.<name>`` computed on raw arrays, each array of the result an ``Underivable`` of the facades."""
    tensors = [a.t for a in _recs(args) + _recs(tuple(kwargs.values()))]
    raw = getattr(B.real, name)(*(_raw(a) for a in args), **{k: _raw(v) for k, v in kwargs.items()})
    message = underivable_message(f"B.{name}")

    def mark(r: Any) -> Any:
        if r is None or not hasattr(r, "dtype") or r.dtype.kind not in "fcV":
            return r
        return Rec(Underivable.apply(*tensors, result=r, message=message))
    return tuple(mark(r) for r in raw) if type(raw) is tuple else [mark(r) for r in raw] \
        if type(raw) is list else mark(raw)


def _recs(args: tuple[Any, ...]) -> list[Rec]:
    out = []
    for a in args:
        if type(a) is Rec:
            out.append(a)
        elif type(a) in (list, tuple):
            out += [b for b in a if type(b) is Rec]
    return out


def _raw(a: Any) -> Any:
    return type(a)(unwrap(b) for b in a) if type(a) in (list, tuple) else unwrap(a)


class _NoArray:
    """The recording backend's ``array_type``: the type of no value."""


class RecordingBackend(Backend):
    """The recording view of one device's backend (``real``); made once per device."""

    recording = True

    def __init__(self, device: Any) -> None:  # no generator: random methods are the real backend's
        self.real = device.backend
        self.device = device
        self.name, self.index = self.real.name, self.real.index
        self.xp = RecordingXP(self.real.xp, device)
        # no array is of this type: the engine's in-place shortcuts for its own arrays (adding into a leaf's
        # .grad, taking over a private gradient) never apply to facades, which may be shared
        self.array_type = _NoArray

    def __repr__(self) -> str:
        return f"RecordingBackend({self.real!r})"


def _method(name: str, generic: Callable[..., Any], static: bool) -> Callable[..., Any]:
    from .recording_rules import ALWAYS, RULES
    rule = RULES.get(name)
    always = name in ALWAYS

    def method(self: RecordingBackend, *args: Any, **kwargs: Any) -> Any:
        if not always and not has_rec(args) and not has_rec(kwargs.values()):
            return getattr(self.real, name)(*args, **kwargs)
        if rule is not None:
            return rule(self, *args, **kwargs)
        try:
            return generic(*args, **kwargs) if static else generic(self, *args, **kwargs)
        except Unrecordable:
            return _underivable(name, self, args, kwargs)
        except TypeError as e:  # a NumPy ufunc (SciPy's) met a facade: NumPy's refusal of __array_ufunc__ = None
            if "does not support ufuncs" not in str(e):
                raise
            return _underivable(name, self, args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _install() -> None:
    """Every method of the backend interface, wrapped (see the module's docstring)."""
    for name, fn in inspect.getmembers(Backend, inspect.isfunction):
        if name.startswith("__") or name in RecordingBackend.__dict__:
            continue
        static = isinstance(inspect.getattr_static(Backend, name), staticmethod)
        setattr(RecordingBackend, name, _method(name, fn, static))


_install()
