"""Arithmetic with broadcasting and PyTorch's type promotion, comparisons and logical ops.

The engine sums each gradient back to its operand's shape, so these backward passes ignore broadcasting.
An operand may be a Python scalar; it then gets no gradient.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from .. import dtypes as _dt
from ._util import cast, check_integer, named, nondiff, promote
from .out_arg import call_with_out
from ..backends.base import Backend

__all__ = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "pow", "neg",
           "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite"]
__all__ += ["fmod", "bitwise_left_shift", "bitwise_right_shift", "isclose", "allclose", "equal"]
__all__ += ["signbit"]
__all__ += ["addcmul", "addcdiv", "float_power"]


class Add(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any, alpha: Any = 1) -> Any:
        ctx.alpha = alpha
        return a + b if alpha == 1 else a + b * alpha

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return gy, (gy if ctx.alpha == 1 else gy * ctx.alpha)


class Sub(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any, alpha: Any = 1) -> Any:
        ctx.alpha = alpha
        return a - b if alpha == 1 else a - b * alpha

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return gy, (-gy if ctx.alpha == 1 else gy * -ctx.alpha) if ctx.needs_input_grad[1] else None


class Mul(ArrayFunction):
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return a * b

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        need_a, need_b = ctx.needs_input_grad
        return (gy * b if need_a else None), (gy * a if need_b else None)


class Div(ArrayFunction):
    """a / b; da = gy / b, db = -gy a / b^2. Saves a rather than y, as PyTorch: writing into y in place
    (``y = x / s; y += 1``) leaves the gradient valid."""

    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        return a / b

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        ga = gy / b
        return ga, (-ga * a / b if ctx.needs_input_grad[1] else None)


class FloorDivide(ArrayFunction):
    """floor(a / b): piecewise constant, so no gradient flows (PyTorch's is zero)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        return a // b

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return None, None


class Remainder(ArrayFunction):
    """a - floor(a / b) * b (the sign of b, like Python's %); da = 1, db = -floor(a / b). ``Fmod`` rounds
    toward zero instead (C's fmod: the sign of a)."""
    op, rounding = "remainder", "floor"

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        return getattr(B, ctx.op)(a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        if not ctx.needs_input_grad[1]:
            return gy, None
        # PyTorch's div(a, b, rounding_mode): floor as a // b (NaN for an infinite a, as PyTorch's), trunc a / b
        quotient = a // b if ctx.rounding == "floor" else B.trunc(a / b)
        return gy, -gy * quotient


class Fmod(Remainder):
    op, rounding = "fmod", "trunc"


class Pow(ArrayFunction):
    """a ** b; da = b a^(b-1) (0 where b = 0), db = a^b log(a) (0 where a = 0 and b >= 0; at a = 0, b < 0
    that is inf * -inf = -inf), as PyTorch's pow_backward_self / pow_backward_exponent."""

    saved_names = ("self", "exponent", "result")

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        y = B.power(a, b)
        ctx.save_for_backward(a, b, y if ctx.needs_input_grad[1] else None)  # y only for db (PyTorch)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b, y = ctx.saved_arrays
        need_a, need_b = ctx.needs_input_grad
        # b a^(b-1) is 0 where b = 0 (PyTorch): use exponent 0 there, not 0^-1 = inf times 0 = nan at a = 0.
        b_nonzero = B.where(b == 0, 1, b) if hasattr(b, "shape") else (b or 1)
        ga = gy * (b * B.power(a, b_nonzero - 1)) if need_a else None  # grouped as PyTorch (overflow order)
        if need_b:
            if not hasattr(a, "shape"):  # a Python base: an array of y's dtype, so log(a) is not float64
                a = B.asarray(a, y.dtype)
            with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf is meant
                gb = gy * B.where((a == 0) & (b >= 0), 0, y * B.log(a))
        else:
            gb = None
        return ga, gb


class Neg(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        return -a

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return -gy


def add(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """input + alpha * other, broadcasting (written into ``out`` where given)."""
    if out is not None:
        return call_with_out("add", add, out, input, other, alpha=alpha)
    a, b = promote(input, other)
    return Add.apply(a, b, alpha=alpha)


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Tensor | None = None) -> Tensor:
    """input - alpha * other, broadcasting (written into ``out`` where given)."""
    if out is not None:
        return call_with_out("sub", sub, out, input, other, alpha=alpha)
    a, b = promote(input, other)
    out = Sub.apply(a, b, alpha=alpha)
    return out if isinstance(input, Tensor) else named(out, "RsubBackward1")  # 1 - x: PyTorch's rsub.Scalar


def mul(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return call_with_out("mul", mul, out, input, other)
    a, b = promote(input, other)
    return Mul.apply(a, b)


def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Tensor | None = None) -> Tensor:
    """True division (integers give the default float dtype); ``rounding_mode`` "floor" or "trunc"."""
    if out is not None:
        return call_with_out("div", div, out, input, other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        a, b = promote(input, other, floating=True)
        out = Div.apply(a, b)
        return out if isinstance(input, Tensor) else named(out, "MulBackward0")  # 2 / x: PyTorch's 2 * x^-1
    if rounding_mode == "floor":
        return named(floor_divide(input, other), "DivBackward2")
    if rounding_mode == "trunc":
        a, b = _promote_divisor(input, other)
        dt = (a if isinstance(a, Tensor) else b).array.dtype
        return nondiff(lambda B, x, y: B.trunc(x / y).astype(dt, copy=False), a, b)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                     f"'{rounding_mode}'")


true_divide = div


class IntegerDivisionByZero(RuntimeError, ZeroDivisionError):
    """PyTorch's RuntimeError("ZeroDivisionError"), still caught as Python's ZeroDivisionError."""


def _promote_divisor(input: Any, other: Any) -> tuple[Any, Any]:
    """``promote`` for the integer-capable divisions. Integer division by zero raises PyTorch's RuntimeError
    "ZeroDivisionError" on the CPU (NumPy returns 0). Not checked on CUDA, where PyTorch does not check either and the
    check would cost a host sync."""
    a, b = promote(input, other)
    t = b if isinstance(b, Tensor) else a
    empty = any(x.array.size == 0 for x in (a, b) if isinstance(x, Tensor))  # nothing divided: no error
    if t.array.dtype.kind in "iu" and t._device.type == "cpu" and not empty and \
            (bool((b.array == 0).any()) if isinstance(b, Tensor) else b == 0):
        raise IntegerDivisionByZero("ZeroDivisionError")
    return a, b


def floor_divide(input: Any, other: Any) -> Tensor:
    a, b = _promote_divisor(input, other)
    return FloorDivide.apply(a, b)


def remainder(input: Any, other: Any) -> Tensor:
    a, b = _promote_divisor(input, other)
    out = Remainder.apply(a, b)
    return named(out, "RemainderBackward1") if isinstance(other, Tensor) else out  # PyTorch's .Tensor overload


def fmod(input: Tensor, other: Any) -> Tensor:
    """input - trunc(input / other) * other: the sign of the dividend (``remainder`` takes the divisor's)."""
    a, b = _promote_divisor(input, other)
    out = Fmod.apply(a, b)
    return named(out, "FmodBackward1") if isinstance(other, Tensor) else out  # PyTorch's .Tensor overload


def pow(input: Any, exponent: Any) -> Tensor:
    a, b = promote(input, exponent)
    try:  # PyTorch's node: pow.Tensor_Scalar's PowBackward0, .Tensor_Tensor's 1, .Scalar's 2
        out = Pow.apply(a, b)
        return out if not isinstance(exponent, Tensor) else \
            named(out, "PowBackward1" if isinstance(input, Tensor) else "PowBackward2")
    except ValueError as e:  # NumPy's, for integers to a negative integer power: PyTorch's type
        if "negative integer powers" not in str(e):
            raise
        raise RuntimeError("Integers to negative integer powers are not allowed.") from None


def neg(input: Tensor) -> Tensor:
    return Neg.apply(input)


def float_power(input: Any, exponent: Any) -> Tensor:
    """input ** exponent computed in float64 (the result is float64, as PyTorch)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power() expects a Tensor argument, got ({type(input).__name__}, "
                        f"{type(exponent).__name__})")
    a, b = (x.to(_dt.float64) if isinstance(x, Tensor) else float(x) for x in (input, exponent))
    return pow(a, b)


def _addc(name: str, op: Callable[[Tensor, Tensor], Tensor], input: Tensor, tensor1: Tensor, tensor2: Tensor,
          value: Any) -> Tensor:
    """input + value * op(tensor1, tensor2), all three promoted to their common dtype first (PyTorch's rule);
    an integer result truncates ``value`` to an integer, as PyTorch does."""
    for position, what, v in ((1, "input", input), (2, "tensor1", tensor1), (3, "tensor2", tensor2)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, not "
                            f"{type(v).__name__}")
    dt = _dt.result_type(input, tensor1, tensor2)
    if dt is _dt.bool:
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    if not dt.is_floating_point:
        value = int(value)
    term = op(cast(tensor1, dt), cast(tensor2, dt))
    return named(add(cast(input, dt), term if value == 1 else term * value), name.capitalize() + "Backward0")


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 * tensor2, broadcasting; all three get gradients."""
    return _addc("addcmul", mul, input, tensor1, tensor2, value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """input + value * tensor1 / tensor2, broadcasting; tensor1 and tensor2 may not both be integers."""
    if all(isinstance(t, Tensor) and not t.is_floating_point() for t in (tensor1, tensor2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported: for integer tensor1 and "
                           "tensor2 write (input + value * minitensor.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "(the historic behavior) or input + value * tensor1 / tensor2 (true division).")
    return _addc("addcdiv", div, input, tensor1, tensor2, value)


def _no_grad(name: str, method: str = "", unary: bool = False, integer_only: bool = False) -> Callable[..., Tensor]:
    """PyTorch's ``name(input, other)`` (``unary``: ``name(input)``) without gradient: the backend's ``method``
    (default ``name``); ``integer_only``: a floating input gets PyTorch's NotImplementedError (the bitwise
    ops)."""
    method = method or name

    def call(B: Backend, *arrays: Any) -> Any:
        return getattr(B, method)(*arrays)

    def one(input: Tensor) -> Tensor:
        if integer_only:
            check_integer(name, input)
        return nondiff(call, input)

    def two(input: Any, other: Any) -> Tensor:
        if integer_only:
            check_integer(name, input)
        return nondiff(call, input, other)

    op: Callable[..., Tensor] = one if unary else two
    op.__name__ = op.__qualname__ = name
    return op


eq, ne, lt, le, gt, ge = map(_no_grad, ("eq", "ne", "lt", "le", "gt", "ge"),
                             ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))
logical_and, logical_or, logical_xor = map(_no_grad, ("logical_and", "logical_or", "logical_xor"))
bitwise_and, bitwise_or, bitwise_xor = (_no_grad(name, integer_only=True)
                                        for name in ("bitwise_and", "bitwise_or", "bitwise_xor"))
logical_not, isnan, isinf, isfinite = (_no_grad(name, unary=True)
                                       for name in ("logical_not", "isnan", "isinf", "isfinite"))
bitwise_not = _no_grad("bitwise_not", unary=True, integer_only=True)
signbit = _no_grad("signbit", unary=True)  # the sign bit set: True for -0.0 and -nan; False for bool and uint8


def _shift(name: str, kernel: str, input: Any, other: Any) -> Tensor:
    check_integer(kernel, input)
    check_integer(kernel, other)
    a, b = promote(input, other)
    return nondiff(lambda B, x, y: getattr(B, name)(x, y), a, b)


def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """input * 2^other for integer tensors (``<<``); shifting past the width gives 0, as PyTorch."""
    return _shift("left_shift", "lshift", input, other)


def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """Arithmetic right shift of integer tensors (``>>``): the sign is kept."""
    return _shift("right_shift", "rshift", input, other)


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol |other| elementwise (bool); both tensors of one dtype, as PyTorch."""
    for position, what, v in ((1, "input", input), (2, "other", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"isclose(): argument '{what}' (position {position}) must be Tensor, not "
                            f"{type(v).__name__}")
    if input.dtype is not other.dtype:
        from ._util import torch_dtype_name
        raise RuntimeError(f"{torch_dtype_name(input.dtype)} did not match {torch_dtype_name(other.dtype)}")
    for what, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{what} must be greater than or equal to zero, but got {tol}")
    return nondiff(lambda B, a, b: B.isclose(a, b, rtol, atol, equal_nan), input, other)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when every element is close (``isclose``), as a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and elements (a Python bool)."""
    if input.shape != other.shape:
        return False
    return bool(eq(input, other).all().item())
