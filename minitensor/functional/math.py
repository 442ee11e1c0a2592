"""Elementwise math. Most ops are one ``_Elementwise`` row: the forward ``f``, which of x or y to save,
and the gradient ``df(B, gy, saved)``."""
from __future__ import annotations

from typing import Any, Callable

import math

import ml_dtypes
import numpy as np

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ._util import check_floating, keep_bfloat16, named, nondiff, promote, to_float
from .indexing import where
from ..backends.base import Backend

__all__ = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "abs", "sign", "sin", "cos", "reciprocal",
           "clamp", "clip", "maximum", "minimum", "floor", "ceil", "round", "square", "log2", "log10"]
__all__ += ["tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh",
            "arccosh", "atanh", "arctanh", "exp2", "erf", "erfc", "erfinv", "trunc", "fix", "frac", "atan2", "arctan2",
            "hypot", "copysign", "logaddexp", "logaddexp2", "lerp"]
__all__ += ["clamp_min", "clamp_max", "heaviside", "nan_to_num"]

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


class _Elementwise(ArrayFunction):
    save_output = False  # save y instead of x
    f: Callable[[Any, Any], Any]
    df: Callable[[Any, Any, Any], Any]

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any) -> Any:
        y = keep_bfloat16(ctx.f(B, x), x)
        ctx.save_for_backward(y if ctx.save_output else x)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        s, = ctx.saved_arrays
        return ctx.df(B, gy, s)


def _op(name: str, f: Callable, df: Callable, save_output: bool = False) -> type[ArrayFunction]:
    return type(name, (_Elementwise,), {"f": staticmethod(f), "df": staticmethod(df),
                                        "save_output": save_output, "__module__": __name__,
                                        "saved_names": ("result",) if save_output else ("self",)})


Exp = _op("Exp", lambda B, x: B.exp(x), lambda B, g, y: g * y, save_output=True)
Log = _op("Log", lambda B, x: B.log(x), lambda B, g, x: g / x)
Log2 = _op("Log2", lambda B, x: B.log2(x), lambda B, g, x: g / (x * 0.6931471805599453))
Log10 = _op("Log10", lambda B, x: B.log10(x), lambda B, g, x: g / (x * 2.302585092994046))
Log1p = _op("Log1p", lambda B, x: B.log1p(x), lambda B, g, x: g / (1 + x))
Log1p.torch_name = "Log1PBackward0"  # PyTorch's spelling
Expm1 = _op("Expm1", lambda B, x: B.expm1(x), lambda B, g, y: g * (y + 1), save_output=True)
Sqrt = _op("Sqrt", lambda B, x: B.sqrt(x), lambda B, g, y: g / (2 * y), save_output=True)
Rsqrt = _op("Rsqrt", lambda B, x: 1 / B.sqrt(x), lambda B, g, y: g * -0.5 * y * y * y, save_output=True)
Abs = _op("Abs", lambda B, x: B.abs(x), lambda B, g, x: g * B.nan_to_num(B.sign(x), 0.0, 1.0, -1.0))  # sgn(nan) = 0
Sin = _op("Sin", lambda B, x: B.sin(x), lambda B, g, x: g * B.cos(x))
Cos = _op("Cos", lambda B, x: B.cos(x), lambda B, g, x: -g * B.sin(x))
Reciprocal = _op("Reciprocal", lambda B, x: 1 / x, lambda B, g, y: -g * y * y, save_output=True)
Square = _op("Square", lambda B, x: x * x, lambda B, g, x: 2 * g * x)
Square.torch_name = "PowBackward0"  # PyTorch's square is pow(x, 2)
Tan = _op("Tan", lambda B, x: B.tan(x), lambda B, g, y: g * (1 + y * y), save_output=True)
Asin = _op("Asin", lambda B, x: B.arcsin(x), lambda B, g, x: g / B.sqrt(1 - x * x))
Acos = _op("Acos", lambda B, x: B.arccos(x), lambda B, g, x: -g / B.sqrt(1 - x * x))
Atan = _op("Atan", lambda B, x: B.arctan(x), lambda B, g, x: g / (1 + x * x))
Sinh = _op("Sinh", lambda B, x: B.sinh(x), lambda B, g, x: g * B.cosh(x))
Cosh = _op("Cosh", lambda B, x: B.cosh(x), lambda B, g, x: g * B.sinh(x))
Asinh = _op("Asinh", lambda B, x: B.arcsinh(x), lambda B, g, x: g / B.sqrt(x * x + 1))
Acosh = _op("Acosh", lambda B, x: B.arccosh(x), lambda B, g, x: g / B.sqrt(x * x - 1))
Atanh = _op("Atanh", lambda B, x: B.arctanh(x), lambda B, g, x: g / (1 - x * x))
Exp2 = _op("Exp2", lambda B, x: B.exp2(x), lambda B, g, y: g * y * 0.6931471805599453, save_output=True)
Erf = _op("Erf", lambda B, x: B.erf(x), lambda B, g, x: g * _TWO_OVER_SQRT_PI * B.exp(-x * x))
Erfc = _op("Erfc", lambda B, x: B.erfc(x), lambda B, g, x: -g * _TWO_OVER_SQRT_PI * B.exp(-x * x))
Erfinv = _op("Erfinv", lambda B, x: B.erfinv(x), lambda B, g, y: g / _TWO_OVER_SQRT_PI * B.exp(y * y),
             save_output=True)
Frac = _op("Frac", lambda B, x: x - B.trunc(x), lambda B, g, x: g)
Erfinv.saved_names = Frac.saved_names = ()  # PyTorch saves erfinv's input (this its output), frac nothing


class Clamp(ArrayFunction):
    """min(max(x, lo), hi); the gradient passes where lo <= x <= hi (both ends included, as PyTorch)."""
    torch_name = "ClampBackward1"  # PyTorch's grad_fn name (of its clamp with number bounds)

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, lo: Any, hi: Any) -> Any:
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return keep_bfloat16(B.clip(x, lo, hi), x)  # ml_dtypes has no clip loop: NumPy's runs in float32

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_arrays
        keep = True
        if ctx.lo is not None:
            keep = x >= ctx.lo
        if ctx.hi is not None:
            keep = keep & (x <= ctx.hi)
        # a where, not gy * keep: a clamped element gets exactly 0 even when gy is nan or inf (PyTorch's)
        return B.where(keep, gy, 0).astype(gy.dtype, copy=False), None, None


class _MaxMin(ArrayFunction):
    """Elementwise max/min; at ties each side gets half the gradient, and a side gets all of it unless it
    loses (PyTorch's formula: with a NaN neither loses, so both get it)."""
    pick: str

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return getattr(B, ctx.pick)(a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        a_loses, b_loses = ((a < b), (a > b)) if ctx.pick == "maximum" else ((a > b), (a < b))
        tie = (a == b).astype(gy.dtype) * 0.5  # in gy's dtype: bool * 0.5 would be float64
        # the loser gets exactly 0 even when gy is nan or inf (PyTorch masks; a product would give nan)
        return _masked(B, a_loses, gy * (1 - tie)), _masked(B, b_loses, gy * (1 - tie))


def _masked(B: Backend, out: Any, g: Any) -> Any:
    """g where ``out`` is False, exactly 0 where it is True (nan and inf in g included)."""
    return B.where(out, 0, g).astype(g.dtype, copy=False)


class Maximum(_MaxMin):
    pick = "maximum"


class Minimum(_MaxMin):
    pick = "minimum"


class ClampMin(_MaxMin):
    """clamp_min with a tensor bound, max(x, bound): x's gradient where x >= bound (ties go to x), the
    bound's where x < bound, neither's at a nan (PyTorch's clamp_min.Tensor)."""
    pick = "maximum"

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        a_keeps, b_keeps = ((a >= b), (a < b)) if ctx.pick == "maximum" else ((a <= b), (a > b))
        return _masked(B, ~a_keeps, gy), _masked(B, ~b_keeps, gy)


class ClampMax(ClampMin):
    pick = "minimum"


def _unary(fn: type[ArrayFunction]) -> Callable[[Tensor], Tensor]:
    def op(input: Tensor) -> Tensor:
        return fn.apply(to_float(input))
    op.__name__ = fn.__name__.lower()
    op.__doc__ = f"Elementwise {op.__name__}; integer inputs give the default float dtype."
    return op


exp, log, log2, log10, log1p, expm1, sqrt, rsqrt, sin, cos, reciprocal = map(
    _unary, (Exp, Log, Log2, Log10, Log1p, Expm1, Sqrt, Rsqrt, Sin, Cos, Reciprocal))
tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, exp2, erf, erfc, erfinv = map(
    _unary, (Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Exp2, Erf, Erfc, Erfinv))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


def frac(input: Tensor) -> Tensor:
    """x - trunc(x), with x's sign; floating dtypes only, as PyTorch."""
    check_floating("frac", input)
    return Frac.apply(input)


def abs(input: Tensor) -> Tensor:
    if input.array.dtype.kind in "fV":
        return Abs.apply(input)
    if input.array.dtype.kind == "b":  # PyTorch has no bool kernel (sgn takes bool)
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')
    return nondiff(lambda B, x: B.abs(x), input)


def square(input: Tensor) -> Tensor:
    return Square.apply(input)


class PiecewiseConstant(ArrayFunction):
    """sign, floor, ceil, round: y = f(B, x), whose gradient is zero almost everywhere; x gets a zero gradient,
    as in PyTorch (not none)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, f: Callable[[Backend, Any], Any]) -> Any:
        return f(B, x)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.zeros(gy.shape, gy.dtype), None


def _piecewise_constant(input: Tensor, f: Callable[[Backend, Any], Any], node: str) -> Tensor:
    """f(input) with a zero gradient; ``node``: PyTorch's name of the node (SignBackward0, FloorBackward0...)."""
    if input.array.dtype.kind in "fV":
        return named(PiecewiseConstant.apply(input, f), node)
    return nondiff(f, input)


def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1; 0 at nan, as PyTorch (NumPy's sign gives nan); a bool tensor is its own sign (NumPy has
    no bool loop)."""
    return _piecewise_constant(input, lambda B, x: B.nan_to_num(B.sign(x), 0.0, 1.0, -1.0)
                               if x.dtype.kind in "fV" else x.copy() if x.dtype.kind == "b" else B.sign(x),
                               "SignBackward0")


def floor(input: Tensor) -> Tensor:
    return _piecewise_constant(input, lambda B, x: B.floor(x), "FloorBackward0")


def ceil(input: Tensor) -> Tensor:
    return _piecewise_constant(input, lambda B, x: B.ceil(x), "CeilBackward0")


def trunc(input: Tensor) -> Tensor:
    """Round toward zero; integer tensors come back as they are (a copy)."""
    return _piecewise_constant(input, lambda B, x: B.trunc(x), "TruncBackward0")


fix = trunc


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even, as PyTorch; ``decimals`` needs a floating dtype."""
    if decimals:
        check_floating("round", input)
    return _piecewise_constant(input, lambda B, x: B.round(x, decimals),
                               "RoundBackward1" if decimals else "RoundBackward0")


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Clamp into [min, max]; bounds may be numbers or tensors (tensor bounds also get gradients)."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input if min is None else clamp_min(input, min)
        return out if max is None else clamp_max(out, max)
    if input.array.dtype.kind not in "fV" and any(isinstance(v, float) for v in (min, max)):
        input = to_float(input)
    return Clamp.apply(input, min, max)


clip = clamp


def _clamp_bound(fn: type[ArrayFunction], name: str, input: Tensor, bound: Any) -> Tensor:
    if isinstance(bound, Tensor):
        return fn.apply(*promote(input, bound))
    if not isinstance(bound, (int, float, np.generic)):
        raise TypeError(f"{name}(): argument '{name[6:]}' (position 2) must be Number or Tensor, not "
                        f"{type(bound).__name__}")
    return clamp(input, bound, None) if fn is ClampMin else clamp(input, None, bound)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    """max(input, min): ``clamp`` with a lower bound only (a number or a broadcasting tensor)."""
    return named(_clamp_bound(ClampMin, "clamp_min", input, min), "ClampMinBackward0")


def clamp_max(input: Tensor, max: Any) -> Tensor:
    """min(input, max): ``clamp`` with an upper bound only (a number or a broadcasting tensor)."""
    return named(_clamp_bound(ClampMax, "clamp_max", input, max), "ClampMaxBackward0")


def maximum(input: Any, other: Any) -> Tensor:
    a, b = promote(input, other)
    return Maximum.apply(a, b)


def minimum(input: Any, other: Any) -> Tensor:
    a, b = promote(input, other)
    return Minimum.apply(a, b)


class _Binary(ArrayFunction):
    """A two-operand op: ``f(B, a, b)`` forward, ``df(B, gy, a, b, y)`` the pair of gradients."""
    f: Callable[[Any, Any, Any], Any]
    df: Callable[[Any, Any, Any, Any, Any], tuple[Any, Any]]

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        y = ctx.f(B, a, b)
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b, y = ctx.saved_arrays
        return ctx.df(B, gy, a, b, y)


def _binary_op(name: str, f: Callable, df: Callable) -> type[ArrayFunction]:
    return type(name, (_Binary,), {"f": staticmethod(f), "df": staticmethod(df), "__module__": __name__})


def _atan2_grad(B: Backend, g: Any, a: Any, b: Any, y: Any) -> tuple[Any, Any]:
    r2 = a * a + b * b
    scale = g / B.where(r2 == 0, 1, r2) * (r2 != 0)  # 0 at the origin, as PyTorch (not 0/0)
    return scale * b, -scale * a


Atan2 = _binary_op("Atan2", lambda B, a, b: B.arctan2(a, b), _atan2_grad)
Hypot = _binary_op("Hypot", lambda B, a, b: B.hypot(a, b), lambda B, g, a, b, y: (g * a / y, g * b / y))
# d/da copysign(a, b) = sign(a) sign(b), 0 at a = 0 (PyTorch: y / a there taken as 0); no gradient to b.
Copysign = _binary_op("Copysign", lambda B, a, b: B.copysign(a, b),
                      lambda B, g, a, b, y: (g * B.where(a == 0, 0, y / B.where(a == 0, 1, a)), g * 0))
def _logaddexp_grads(g: Any, a: Any, b: Any, exp: Callable[[Any], Any]) -> tuple[Any, Any]:
    """PyTorch's g / (1 + exp(b - a)), not g exp(a - y): at a = inf it gives 1, where exp(inf - inf) is NaN;
    an exp that overflows gives the right 0."""
    with np.errstate(over="ignore"):
        return g / (1 + exp(b - a)), g / (1 + exp(a - b))


LogAddExp = _binary_op("LogAddExp", lambda B, a, b: B.logaddexp(a, b),
                       lambda B, g, a, b, y: _logaddexp_grads(g, a, b, B.exp))
LogAddExp2 = _binary_op("LogAddExp2", lambda B, a, b: B.logaddexp2(a, b),
                        lambda B, g, a, b, y: _logaddexp_grads(g, a, b, B.exp2))


def _apply_binary(fn: type[ArrayFunction], input: Any, other: Any) -> Tensor:
    """fn on the operands promoted to (at least) the default float dtype; a Python number stays a scalar."""
    a, b = promote(input, other, floating=True)
    return fn.apply(a, b)


def atan2(input: Any, other: Any) -> Tensor:
    """The angle of (other, input) in (-pi, pi]; integers give the default float dtype."""
    return _apply_binary(Atan2, input, other)


arctan2 = atan2


def hypot(input: Tensor, other: Any) -> Tensor:
    """sqrt(input^2 + other^2) without overflow; floating dtypes only, as PyTorch."""
    check_floating("hypot", input)
    return _apply_binary(Hypot, input, other)


def copysign(input: Any, other: Any) -> Tensor:
    """|input| with the sign of other (of -0.0 too); integers give the default float dtype."""
    return _apply_binary(Copysign, input, other)


def logaddexp(input: Tensor, other: Any) -> Tensor:
    """log(exp(input) + exp(other)), stable; floating dtypes only, as PyTorch."""
    check_floating("logaddexp", input)
    return _apply_binary(LogAddExp, input, other)


def logaddexp2(input: Tensor, other: Any) -> Tensor:
    """log2(2^input + 2^other), stable; floating dtypes only, as PyTorch."""
    check_floating("logaddexp2", input)
    return _apply_binary(LogAddExp2, input, other)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """input + weight (end - input) for weight < 0.5, end - (end - input) (1 - weight) otherwise (PyTorch's
    two forms: exact at weight 1, and lerp(-inf, x, w >= 0.5) is -inf, not NaN); ``end`` (and a tensor
    ``weight``) must have input's dtype, as PyTorch. Written with the arithmetic ops: all three get gradients."""
    check_floating("lerp_kernel_scalar" if not isinstance(weight, Tensor) else "lerp_kernel_tensor", input)
    for what, v in (("end", end), ("weight", weight)):
        if isinstance(v, Tensor) and v.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {input.dtype} for `{what}` but got dtype {v.dtype}")
    if not isinstance(weight, Tensor):
        out = input + weight * (end - input) if -0.5 < weight < 0.5 else end - (end - input) * (1 - weight)
        return named(out, "LerpBackward0")
    return named(where(weight.abs() < 0.5, input + weight * (end - input), end - (end - input) * (1 - weight)),
                 "LerpBackward1")


class Heaviside(ArrayFunction):
    """1 where x > 0, ``values`` where x = 0, 0 elsewhere (nan included). It has no derivative in PyTorch:
    backward through it raises."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, values: Any) -> Any:
        return B.where(x == 0, values, x > 0)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        raise RuntimeError("derivative for aten::heaviside is not implemented")


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The Heaviside step of input, ``values`` (a tensor of input's dtype, broadcasting) at 0."""
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if values.dtype is not input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return Heaviside.apply(input, values)


class NanToNum(ArrayFunction):
    """nan, +inf and -inf replaced by numbers; the gradient passes where x is finite (PyTorch's)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, nan: float, posinf: float, neginf: float) -> Any:
        ctx.save_for_backward(x)
        return B.nan_to_num(x, nan, posinf, neginf)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_arrays
        return gy * B.isfinite(x), None, None, None


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """nan -> ``nan``, inf -> ``posinf``, -inf -> ``neginf`` (default: the dtype's largest finite number and its
    negative); integer and bool tensors come back as a copy."""
    if input.array.dtype.kind not in "fV":  # a sparse copy comes back coalesced, as PyTorch's
        return (input.coalesce() if input.is_sparse else input).clone()
    top = float(ml_dtypes.finfo(input.array.dtype).max)
    return NanToNum.apply(input, float(nan), top if posinf is None else float(posinf),
                          -top if neginf is None else float(neginf))
