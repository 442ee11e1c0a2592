"""PyTorch's smaller pointwise ops, composed of the math and arithmetic families: angle conversions, the
NaN-ignoring ``fmax`` / ``fmin``, ``gcd`` / ``lcm``, ``ldexp`` / ``frexp``, ``nextafter`` and the
classifiers ``isposinf`` / ``isneginf`` / ``isreal``. No backend family of its own: ``gcd``, ``lcm``,
``nextafter`` and ``frexp`` are methods of the arithmetic family (``backends/generic/arithmetic.py``)."""
from __future__ import annotations

import math
from typing import Any

from ..autograd.function import ArrayFunction
from .. import dtypes as _dt
from .. import return_types as rt
from ..backends.base import Backend
from ..tensor import Tensor
from ._util import check_integer, nondiff, promote, to_float, torch_dtype_name
from .arithmetic import eq, isnan, mul, pow
from .indexing import where

__all__ = ["deg2rad", "rad2deg", "fmax", "fmin", "gcd", "lcm", "ldexp", "frexp", "nextafter", "isposinf",
           "isneginf", "isreal"]

def deg2rad(input: Tensor) -> Tensor:
    """x * pi / 180 (integers and bools give the default float dtype)."""
    return mul(to_float(input), math.pi / 180)


def rad2deg(input: Tensor) -> Tensor:
    """x * 180 / pi."""
    return mul(to_float(input), 180 / math.pi)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """max(a, b), but a NaN loses to a number (NaN only where both are NaN); the gradient goes to ``input``
    where input >= other or other is NaN, to ``other`` elsewhere (PyTorch's rule)."""
    a, b = promote(input, other)
    return where((a >= b) | isnan(b), a, b)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """min(a, b), but a NaN loses to a number; ties give their gradient to ``input``."""
    a, b = promote(input, other)
    return where((a <= b) | isnan(b), a, b)


def _integer_op(name: str, input: Tensor, other: Tensor) -> Tensor:
    for x in (input, other):
        check_integer(name, x)
        if isinstance(x, Tensor) and x.array.dtype.kind == "b":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    a, b = promote(input, other)
    return nondiff(lambda B, x, y: getattr(B, name)(x, y), a, b)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor, elementwise (integer tensors; gcd(0, 0) = 0; non-negative)."""
    return _integer_op("gcd", input, other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple, elementwise (integer tensors; 0 where either is 0)."""
    return _integer_op("lcm", input, other)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """input * 2^other: both promoted to their float dtype first (integers: the default float dtype), as
    PyTorch's result type; differentiable in both. Both must be tensors, as PyTorch's."""
    for position, (what, v) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(v, Tensor):
            kind = type(v).__name__ if type(v).__module__ == "builtins" else f"{type(v).__module__}.{type(v).__name__}"
            raise TypeError(f"ldexp(): argument '{what}' (position {position}) must be Tensor, not {kind}")
    a, b = promote(input, other, floating=True)
    return mul(a, pow(2.0, b))


class Frexp(ArrayFunction):
    """x = mantissa * 2^exponent; the mantissa's gradient is g / 2^exponent, the exponent has none."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any) -> Any:
        m, e = B.frexp(x)
        ctx.save_for_backward(e)
        return m, e

    @staticmethod
    def backward(ctx: Any, B: Backend, gm: Any) -> Any:
        e, = ctx.saved_arrays
        return gm / B.exp2(e.astype(gm.dtype))


def frexp(input: Tensor) -> rt.frexp:
    """(mantissa, exponent) with input = mantissa * 2^exponent, 0.5 <= |mantissa| < 1; exponent int32."""
    if input.array.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return rt.frexp(Frexp.apply(input))


class NextAfter(ArrayFunction):
    """The step to the neighbouring float, with PyTorch's gradient: the input's passes through where
    input != other (where they are equal the result is other itself), the direction's is 0."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.moved = a != b
        return B.nextafter(a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.where(ctx.moved, gy, 0), B.full(gy.shape, 0, gy.dtype)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next representable float after ``input`` towards ``other`` (float tensors); PyTorch's gradient:
    ``grad`` for input where input != other, 0 for other."""
    if not isinstance(other, Tensor):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    a, b = promote(input, other)
    if a.array.dtype.kind != "f":  # bfloat16 (kind V) too: NumPy has no nextafter loop for it
        raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{torch_dtype_name(a.dtype)}\'')
    if a.shape != b.shape:  # the ArrayFunction's gradients must have the inputs' shapes
        from .stacking import broadcast_tensors
        a, b = broadcast_tensors(a, b)
    return NextAfter.apply(a, b)


def isposinf(input: Tensor) -> Tensor:
    """input == +inf (bool; False everywhere for integer tensors)."""
    return eq(input, math.inf)


def isneginf(input: Tensor) -> Tensor:
    """input == -inf (bool)."""
    return eq(input, -math.inf)


def isreal(input: Tensor) -> Tensor:
    """True everywhere: minitensor has no complex dtypes (bool, input's shape)."""
    from ..creation import ones_like
    return ones_like(input, dtype=_dt.bool)

