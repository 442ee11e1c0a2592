"""Elementwise math. Most ops are one ``_Elementwise`` row: the forward ``f``, which of x or y to save,
and the gradient ``df(B, gy, saved)``."""
from __future__ import annotations

from typing import Any, Callable

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import nondiff, promote, to_float
from ..backends.base import Backend

__all__ = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "abs", "sign", "sin", "cos", "reciprocal",
           "clamp", "clip", "maximum", "minimum", "floor", "ceil", "round", "square", "log2", "log10"]


class _Elementwise(Function):
    save_output = False  # save y instead of x
    f: Callable[[Any, Any], Any]
    df: Callable[[Any, Any, Any], Any]

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any) -> Any:
        y = ctx.f(B, x)
        ctx.save_for_backward(y if ctx.save_output else x)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        s, = ctx.saved_tensors
        return ctx.df(B, gy, s)


def _op(name: str, f: Callable, df: Callable, save_output: bool = False) -> type[Function]:
    return type(name, (_Elementwise,), {"f": staticmethod(f), "df": staticmethod(df),
                                        "save_output": save_output, "__module__": __name__})


Exp = _op("Exp", lambda B, x: B.exp(x), lambda B, g, y: g * y, save_output=True)
Log = _op("Log", lambda B, x: B.log(x), lambda B, g, x: g / x)
Log2 = _op("Log2", lambda B, x: B.log2(x), lambda B, g, x: g / (x * 0.6931471805599453))
Log10 = _op("Log10", lambda B, x: B.log10(x), lambda B, g, x: g / (x * 2.302585092994046))
Log1p = _op("Log1p", lambda B, x: B.log1p(x), lambda B, g, x: g / (1 + x))
Expm1 = _op("Expm1", lambda B, x: B.expm1(x), lambda B, g, y: g * (y + 1), save_output=True)
Sqrt = _op("Sqrt", lambda B, x: B.sqrt(x), lambda B, g, y: g / (2 * y), save_output=True)
Rsqrt = _op("Rsqrt", lambda B, x: 1 / B.sqrt(x), lambda B, g, y: g * -0.5 * y * y * y, save_output=True)
Abs = _op("Abs", lambda B, x: B.abs(x), lambda B, g, x: g * B.sign(x))
Sin = _op("Sin", lambda B, x: B.sin(x), lambda B, g, x: g * B.cos(x))
Cos = _op("Cos", lambda B, x: B.cos(x), lambda B, g, x: -g * B.sin(x))
Reciprocal = _op("Reciprocal", lambda B, x: 1 / x, lambda B, g, y: -g * y * y, save_output=True)
Square = _op("Square", lambda B, x: x * x, lambda B, g, x: 2 * g * x)


class Clamp(Function):
    """min(max(x, lo), hi); the gradient passes where lo <= x <= hi (both ends included, as PyTorch)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, lo: Any, hi: Any) -> Any:
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return B.clip(x, lo, hi)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_tensors
        keep = True
        if ctx.lo is not None:
            keep = x >= ctx.lo
        if ctx.hi is not None:
            keep = keep & (x <= ctx.hi)
        return gy * keep, None, None


class _MaxMin(Function):
    """Elementwise max/min; at ties each side gets half the gradient (PyTorch)."""
    pick: str

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return getattr(B, ctx.pick)(a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_tensors
        a_wins = (a > b) if ctx.pick == "maximum" else (a < b)
        share = a_wins.astype(gy.dtype)  # in gy's dtype: bool + 0.5 * bool would be float64
        share += 0.5 * (a == b)
        return gy * share, gy * (1 - share)


class Maximum(_MaxMin):
    pick = "maximum"


class Minimum(_MaxMin):
    pick = "minimum"


def _unary(fn: type[Function]) -> Callable[[Tensor], Tensor]:
    def op(input: Tensor) -> Tensor:
        return fn.apply(to_float(input))
    op.__name__ = fn.__name__.lower()
    op.__doc__ = f"Elementwise {op.__name__}; integer inputs give the default float dtype."
    return op


exp, log, log2, log10, log1p, expm1, sqrt, rsqrt, sin, cos, reciprocal = map(
    _unary, (Exp, Log, Log2, Log10, Log1p, Expm1, Sqrt, Rsqrt, Sin, Cos, Reciprocal))


def abs(input: Tensor) -> Tensor:
    if input.array.dtype.kind == "f":
        return Abs.apply(input)
    return nondiff(lambda B, x: B.abs(x), input)


def square(input: Tensor) -> Tensor:
    return Square.apply(input)


class PiecewiseConstant(Function):
    """sign, floor, ceil, round: y = f(B, x), whose gradient is zero almost everywhere; x gets a zero gradient,
    as in PyTorch (not none)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, f: Callable[[Backend, Any], Any]) -> Any:
        return f(B, x)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.zeros(gy.shape, gy.dtype), None


def _piecewise_constant(input: Tensor, f: Callable[[Backend, Any], Any]) -> Tensor:
    if input.array.dtype.kind == "f":
        return PiecewiseConstant.apply(input, f)
    return nondiff(f, input)


def sign(input: Tensor) -> Tensor:
    return _piecewise_constant(input, lambda B, x: B.sign(x))


def floor(input: Tensor) -> Tensor:
    return _piecewise_constant(input, lambda B, x: B.floor(x))


def ceil(input: Tensor) -> Tensor:
    return _piecewise_constant(input, lambda B, x: B.ceil(x))


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even, as PyTorch."""
    return _piecewise_constant(input, lambda B, x: B.round(x, decimals))


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Clamp into [min, max]; bounds may be numbers or tensors (tensor bounds also get gradients)."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input if min is None else maximum(input, min)
        return out if max is None else minimum(out, max)
    if input.array.dtype.kind != "f" and any(isinstance(v, float) for v in (min, max)):
        input = to_float(input)
    return Clamp.apply(input, min, max)


clip = clamp


def maximum(input: Any, other: Any) -> Tensor:
    a, b = promote(input, other)
    return Maximum.apply(a, b)


def minimum(input: Any, other: Any) -> Tensor:
    a, b = promote(input, other)
    return Minimum.apply(a, b)
