"""The array module (``B.xp``) of the recording backend: NumPy's functions over ``Rec`` facades, each one of
minitensor's differentiable ops, so that a generic backend body written against ``self.xp`` records itself.

A function called without a facade among its arguments is the device's own (NumPy's or CuPy's): constants
stay constants. The creation functions (``zeros``, ``ones_like``...) give facades, so that what a body
writes into them is recorded. A function this table does not know raises ``Unrecordable`` when it meets a
facade; the recording backend then computes the method on raw arrays and marks the result as having no
double backward (recording_backend.py). Dtype classes, constants and submodules (``xp.float32``, ``xp.inf``,
``xp.linalg``) are the device module's: a submodule's function given a facade meets its refused
``__array__``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import minitensor as mt
from .. import dtypes as _dt
from .function import ArrayFunction
from .recording import Rec, Unrecordable, has_rec, tensor_of, unwrap, unwrap_scalar
from ..backends.base import Backend
from ..tensor import Tensor, _wrap

__all__ = ["RecordingXP", "IndexAdd"]


class IndexAdd(ArrayFunction):
    """out + src scattered at ``index`` (NumPy's ``add.at`` semantics, repeated indices accumulating), out of
    place: d out = g, d src = g[index]."""

    @staticmethod
    def forward(ctx: Any, B: Backend, out: Any, src: Any, index: Any) -> Any:
        ctx.index = index
        r = B.copy(out)
        B.index_add(r, index, B.broadcast_to(src, r[index].shape) if hasattr(src, "shape") else src)
        return r

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return gy, (gy[ctx.index] if ctx.needs_input_grad[1] else None), None


def _dtype(d: Any) -> Any:
    return None if d is None else _dt.from_numpy_dtype(np.dtype(d))


def _moveaxis(x: Tensor, source: Any, destination: Any) -> Tensor:
    n = x.ndim
    src = [int(a) % n for a in ((source,) if isinstance(source, (int, np.integer)) else source)]
    dst = [int(a) % n for a in ((destination,) if isinstance(destination, (int, np.integer)) else destination)]
    order = [a for a in range(n) if a not in src]  # NumPy's moveaxis
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return mt.permute(x, tuple(order))


def _axes(axis: Any) -> Any:
    if axis is None or isinstance(axis, (int, np.integer)):
        return axis
    return tuple(axis) if len(axis) else None


def _expand_dims(x: Tensor, axis: Any) -> Tensor:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    n = x.ndim + len(axes)
    axes = tuple(sorted(a % n for a in axes))
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return mt.reshape(x, tuple(shape))


def _squeeze(x: Tensor, axis: Any = None) -> Tensor:
    if axis is None:
        return mt.reshape(x, tuple(n for n in x.shape if n != 1))
    axes = {a % max(x.ndim, 1) for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis)}
    return mt.reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def _split(x: Tensor, bounds: Any, axis: int = 0) -> list[Tensor]:
    n = x.shape[axis]
    if isinstance(bounds, (int, np.integer)):
        bounds = [n // bounds * k for k in range(1, bounds)]
    edges = [0, *[min(int(b), n) for b in bounds], n]
    return [mt.narrow(x, axis, a, max(b - a, 0)) for a, b in zip(edges, edges[1:])]


def _pad(x: Tensor, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Tensor:
    if mode != "constant":
        raise Unrecordable(f"pad(mode={mode!r})")
    widths = np.broadcast_to(np.asarray(pad_width), (x.ndim, 2))
    flat = [int(v) for pair in widths[::-1] for v in pair]  # PyTorch's order: the last dim first
    return mt.nn.functional.pad(x, flat, value=float(constant_values))


def _take(x: Tensor, index: Any, axis: Any = None) -> Tensor:
    if axis is None:
        x, axis = mt.reshape(x, (-1,)), 0
    idx = index if isinstance(index, Tensor) else mt.as_tensor(np.asarray(index), device=x.device)
    out = mt.index_select(x, axis, mt.reshape(idx, (-1,)))
    return mt.reshape(out, tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:]))


def _reduce(op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def f(x: Tensor, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
        if dtype is not None:
            x = mt.functional.to_dtype(x, _dtype(dtype))
        return op(x, _axes(axis), keepdims)
    return f


def _extreme(op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def f(x: Tensor, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
        return op(x, () if axis is None else axis, keepdims)
    return f


def _clip(x: Tensor, lo: Any = None, hi: Any = None, out: Any = None) -> Tensor:
    return mt.clamp(x, lo, hi)


def _where(c: Any, a: Any, b: Any) -> Tensor:
    return mt.where(c, a, b)


def _einsum(eq: str, *ops: Any, **kwargs: Any) -> Tensor:
    return mt.einsum(eq, *ops)


def _copy(x: Tensor, dtype: Any = None, copy: Any = True, order: Any = None) -> Tensor:
    if dtype is not None:
        x = mt.functional.to_dtype(x, _dtype(dtype))
    return mt.clone(x) if copy else x


# NumPy's name -> the op on tensors (arguments converted by ``tensor_of``: facades as their tensors, raw
# arrays as constant tensors, NumPy scalars as Python numbers).
_OPS: dict[str, Callable[..., Any]] = {
    **{n: getattr(mt, n) for n in ("exp", "log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos", "tan", "sinh",
                                    "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2",
                                    "log2", "log10", "square", "reciprocal", "sinc", "arctan2", "hypot",
                                    "logaddexp", "copysign", "maximum", "minimum", "matmul", "tensordot",
                                    "broadcast_to", "tril", "triu", "nan_to_num")},
    "negative": mt.neg, "abs": mt.abs, "absolute": mt.abs, "add": mt.add, "subtract": mt.sub,
    "multiply": mt.mul, "divide": mt.div, "true_divide": mt.div, "power": mt.pow,
    "dot": mt.matmul, "where": _where, "clip": _clip, "einsum": _einsum,
    "sum": _reduce(mt.sum), "mean": _reduce(mt.mean), "amax": _extreme(mt.amax), "max": _extreme(mt.amax),
    "amin": _extreme(mt.amin), "min": _extreme(mt.amin),
    "prod": lambda x, axis=None, keepdims=False: mt.prod(x, axis, keepdims),
    "cumsum": lambda x, axis=None, dtype=None: mt.functional.cumsum(x, axis),
    "cumprod": lambda x, axis=None, dtype=None: mt.functional.cumprod(x, axis),
    "moveaxis": _moveaxis, "swapaxes": lambda x, a, b: mt.swapaxes(x, a, b),
    "transpose": lambda x, axes=None: mt.permute(x, tuple(range(x.ndim))[::-1] if axes is None else tuple(axes)),
    "reshape": lambda x, shape, order="C": mt.reshape(x, (shape,) if isinstance(shape, int) else tuple(shape)),
    "expand_dims": _expand_dims, "squeeze": _squeeze,
    "concatenate": lambda arrays, axis=0: mt.cat(list(arrays), axis),
    "stack": lambda arrays, axis=0: mt.stack(list(arrays), axis), "split": _split,
    "flip": lambda x, axis=None: mt.flip(x, tuple(range(x.ndim)) if axis is None else axis),
    "roll": lambda x, shift, axis=None: mt.roll(x, shift, axis), "tile": mt.tile,
    "take": _take, "take_along_axis": lambda x, index, axis: mt.gather(x, axis, index),
    "pad": _pad, "diagonal": lambda x, offset=0, axis1=0, axis2=1: mt.diagonal(x, offset, axis1, axis2),
    "ascontiguousarray": lambda x, dtype=None: _copy(x, dtype, False), "asarray": lambda x, dtype=None: _copy(
        x, dtype, False), "array": _copy, "copy": _copy,
}
# Functions without a gradient: computed on the raw arrays, their result a constant (a raw array).
_CONSTANT = {"sign", "floor", "ceil", "trunc", "rint", "round", "isnan", "isinf", "isfinite", "signbit",
             "logical_not", "logical_and", "logical_or", "logical_xor", "invert", "equal", "not_equal", "less",
             "less_equal", "greater", "greater_equal", "floor_divide", "isclose", "argmax", "argmin", "argsort",
             "nonzero", "flatnonzero", "argwhere", "count_nonzero", "shape", "ndim", "size", "may_share_memory"}
_CREATION = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"}


class RecordingXP:
    """``B.xp`` of the recording backend for one device (``xp``: that device's array module)."""

    def __init__(self, xp: Any, device: Any) -> None:
        self._xp, self._device = xp, device

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._xp, name)
        if isinstance(real, type) or not callable(real):
            return real
        if name in _CREATION:
            fn: Any = self._creation(name)
        elif name in _CONSTANT:
            fn = self._constant(real, self._device)
        else:
            fn = _Function(name, real, _OPS.get(name), self._device)
        setattr(self, name, fn)  # looked up once per backend
        return fn

    def _creation(self, name: str) -> Callable[..., Rec]:
        xp, dev = self._xp, self._device

        def create(*args: Any, **kwargs: Any) -> Rec:
            args = tuple(unwrap(a) for a in args)
            kwargs = {k: unwrap(v) for k, v in kwargs.items()}
            return Rec(mt.as_tensor(getattr(xp, name)(*args, **kwargs), device=dev))
        return create

    @staticmethod
    def _constant(real: Callable[..., Any], device: Any) -> Callable[..., Any]:
        """A function without gradient: on facades, a facade over the constant result (so that NumPy's
        in-place idioms on it, ``d = xp.sign(x); d *= g``, keep recording)."""
        def constant(*args: Any, **kwargs: Any) -> Any:
            result = real(*(_raw(a) for a in args), **{k: _raw(v) for k, v in kwargs.items()})
            if type(result) is device.backend.array_type and (has_rec(args) or has_rec(kwargs.values())):
                return Rec(_wrap(result, device))
            return result
        return constant


def _raw(a: Any) -> Any:
    if type(a) in (list, tuple):
        return type(a)(unwrap(b) for b in a)
    return unwrap(a)


class _Function:
    """One function of the recording module: the device's own on constants, the mapped op on facades."""

    def __init__(self, name: str, real: Any, op: Callable[..., Any] | None, device: Any) -> None:
        self.name, self.real, self.op, self.device = name, real, op, device

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not has_rec(args) and not has_rec(kwargs.values()):
            return self.real(*args, **kwargs)
        if self.op is None:
            raise Unrecordable(f"xp.{self.name}")
        if self.op is _add_at:
            return _add_at(*args, **kwargs)
        out = kwargs.pop("out", None)
        like = next(_tensors(args))
        result = self.op(*(_operand(a, like) for a in args), **{k: _operand(v, like) for k, v in kwargs.items()})
        if type(result) in (list, tuple):
            return [Rec(r) for r in result]
        if out is not None:
            if type(out) is not Rec:
                raise Unrecordable(f"xp.{self.name}(out=<a raw array>)")
            return out.assign(result)
        return Rec(result)

    def __getattr__(self, attr: str) -> Any:
        real = getattr(self.real, attr)
        return _Function(f"{self.name}.{attr}", real, _add_at if self.name == "add" and attr == "at" else None,
                         self.device)


def _add_at(out: Any, index: Any, src: Any) -> Any:
    """NumPy's ``add.at(out, index, src)``: into a facade, out of place (a raw ``out`` cannot take a facade)."""
    if type(out) is not Rec:
        raise Unrecordable("xp.add.at into a raw array")
    index = tuple(unwrap(i) for i in index) if type(index) is tuple else unwrap(index)
    out.assign(IndexAdd.apply(out.t, tensor_of(src, out.t), index))
    return None


def _tensors(args: Any) -> Any:
    for a in args:
        if type(a) is Rec:
            yield a.t
        elif type(a) in (list, tuple):
            yield from (b.t for b in a if type(b) is Rec)


def _operand(a: Any, like: Tensor) -> Any:
    if type(a) in (list, tuple):
        return type(a)(_operand(b, like) for b in a)
    if type(a) is Rec or isinstance(a, np.ndarray) or type(a) is like._device.backend.array_type:
        return tensor_of(a, like)
    return unwrap_scalar(a)
