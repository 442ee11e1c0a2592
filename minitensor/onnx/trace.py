"""The tracer: while ``export`` runs the model once, ``Function.apply`` reports every call here and each is
written at once as ONNX nodes by its row in ``ops.TABLE`` (so an unsupported op raises where the model
applies it).

Each tensor the model touches has a value: a graph value's name (str), a ``Param`` (a parameter or
buffer, an initializer under its qualified name) or a ``Const`` (known at export time). A call none of
whose tensors is a graph value is folded: its output is a ``Const`` (PyTorch's constant folding), so masks,
positional tables and any op on them cost nothing and need no row.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from .errors import UnsupportedOperatorError
from .graph import Graph


class Const:
    """A tensor known at export time; ``name`` is set when a node first reads it (its initializer)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array, self.name = array, ""


class Param(Const):
    """A parameter or buffer of the model: an initializer named as in ``state_dict``."""

    def __init__(self, array: np.ndarray, qualname: str) -> None:
        super().__init__(array)
        self.qualname = qualname


class Unexportable:
    """A value that the exporter cannot write (max_pool2d's indices); reading it raises."""

    def __init__(self, op: str, detail: str) -> None:
        self.op, self.detail = op, detail


Value = Any  # str | Const | Param | Unexportable


def host(t: Tensor) -> np.ndarray:
    """A NumPy copy of t's values (later in-place writes to t must not change a constant)."""
    return np.array(t._device.backend.to_numpy(t.array))


class Call:
    """One applied Function as its converter sees it: ``args`` and ``kwargs`` as ``Function.apply`` got them,
    ``out`` the output arrays (the main one first)."""

    def __init__(self, tracer: "Tracer", name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                 out: list[np.ndarray]) -> None:
        self.tracer, self.name = tracer, name
        self.g: Graph = tracer.graph
        self.args: tuple[Any, ...] = args
        self.kwargs: dict[str, Any] = kwargs
        self.out: list[np.ndarray] = out

    @property
    def opset(self) -> int:
        return self.g.opset

    @property
    def dtype(self) -> np.dtype:
        return self.out[0].dtype

    def x(self, i: int) -> str:
        """The ONNX name of positional argument i: a tensor's value, a number as an initializer of the
        output's dtype, or "" for None (an absent optional input)."""
        a = self.args[i] if i < len(self.args) else None
        if isinstance(a, Tensor):
            return self.tracer.name_of(self.tracer.value(a))
        return "" if a is None else self.g.const(a, self.dtype)

    def shape(self, i: int) -> tuple[int, ...]:
        return tuple(self.args[i].shape)

    def unsupported(self, detail: str, supported_version: int | None = None) -> UnsupportedOperatorError:
        return UnsupportedOperatorError(f"minitensor::{self.name}", self.opset, supported_version, detail)


Converter = Callable[[Call], Any]  # returns the output's name, or a tuple with None for outputs it drops


class Tracer:
    """Maps the tensors of one traced run to values and writes each live call into ``graph``."""

    def __init__(self, graph: Graph, table: dict[str, Converter], fold: bool) -> None:
        self.graph, self.table, self.fold = graph, table, fold
        self._values: dict[int, Value] = {}  # id(tensor) -> its value
        self._arrays: dict[int, Value] = {}  # id(array) -> its value: a tensor sharing a traced array (detach)
        self._keep: list[Any] = []  # holds every tensor and array seen, so that no id is reused
        self._sharing: dict[int, list[Tensor]] = {}  # id(memory owner) -> the bound tensors on that memory

    def bind(self, t: Tensor, value: Value) -> None:
        self._keep.append((t, t.array))
        self._values[id(t)] = self._arrays[id(t.array)] = value
        self._sharing.setdefault(id(_memory(t.array)), []).append(t)

    def value(self, t: Tensor) -> Value:
        v = self._values.get(id(t))
        if v is None:
            v = self._arrays.get(id(t.array))
            if v is None:  # made outside any Function (a creation function): its values are a constant
                v = Const(host(t))
            self.bind(t, v)
        return v

    def name_of(self, v: Value) -> str:
        if isinstance(v, str):
            return v
        if isinstance(v, Unexportable):
            raise UnsupportedOperatorError(f"minitensor::{v.op}", self.graph.opset, None, v.detail)
        if not v.name:
            if isinstance(v, Param):
                v.name = v.qualname
                self.graph.params[v.name] = v.array
            else:
                v.name = self.graph.const(v.array)
        return v.name

    def _live(self, v: Value) -> bool:
        return isinstance(v, (str, Unexportable)) or (isinstance(v, Param) and not self.fold)

    def record(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        """``Function.apply``'s report of one call (see minitensor/autograd/function.py)."""
        outs = result if type(result) is tuple else (result,)
        if not any(self._live(self.value(a)) for a in args if isinstance(a, Tensor)):
            for o in outs:
                self.bind(o, Const(host(o)))  # a copy: later in-place writes must not change it
            return
        name = cls.__name__
        converter = self.table.get(name)
        if converter is None:
            detail = ("an op without a gradient (a comparison, a logical, bitwise or rounding op, an integer "
                      "reduction) on a value that depends on the inputs" if name == "NoGrad" else
                      "the ONNX exporter has no conversion for it (minitensor/onnx/ops.py)")
            raise UnsupportedOperatorError(f"minitensor::{name}", self.graph.opset, None, detail)
        names = converter(Call(self, name, args, kwargs, [o.array for o in outs]))
        for o, n in zip(outs, names if type(names) is tuple else (names,)):
            self.bind(o, n if n is not None else Unexportable(name, "this output of it is not exported"))

    def written(self, t: Tensor, src: Any) -> None:
        """``t`` now holds ``src`` (an in-place op or ``copy_``; see minitensor/functional/inplace.py)."""
        v = self._arrays.get(id(src))
        if v is None or not self._live(v):
            v = Const(host(t))
        elif src.shape != t.array.shape or src.dtype != t.array.dtype:
            raise UnsupportedOperatorError("minitensor::copy_", self.graph.opset, None,
                                           "an in-place write that broadcasts or casts a traced value")
        self._overwrite(t, v)

    def put(self, t: Tensor, value: Tensor) -> None:
        """``t[index] = value`` wrote into t outside any Function (minitensor/functional/indexing.py): fine
        between constants, not exportable where either depends on the inputs."""
        if self._live(self.value(t)) or self._live(self.value(value)):
            self._overwrite(t, Unexportable("setitem", "x[index] = value on values that depend on the inputs; "
                                                       "write it out of place (where, masked_fill, cat)"))
        else:
            self._overwrite(t, Const(host(t)))

    def _overwrite(self, t: Tensor, value: Value) -> None:
        """t now has ``value``; the other tensors on its memory (its views, its base) changed untraced."""
        stale = Unexportable("in-place write", "a tensor read after an in-place write into a view of its memory "
                                               "(the trace cannot follow writes through views)")
        for other in self._sharing.pop(id(_memory(t.array)), []):
            if other is not t:
                self._values[id(other)] = self._arrays[id(other.array)] = stale
        self.bind(t, value)


def _memory(a: Any) -> Any:
    """The array that owns a's memory (NumPy and CuPy point a view's ``base`` at it)."""
    return a if a.base is None else a.base
