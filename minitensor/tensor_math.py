"""``TensorMathMethods``: the elementwise math, comparison and shift methods of ``Tensor`` that are one call
into ``minitensor.functional`` each (``x.tan()`` is ``functional.tan(x)``), and their in-place ``x.tan_()``
forms; made from the tables below. ``_F`` is bound by ``tensor.py`` as for ``tensor_methods.py``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .tensor_shape import TensorShapeMethods

if TYPE_CHECKING:
    from .tensor import Tensor

_F: Any = None  # minitensor.functional, bound by tensor.py

# Methods that are functional.<name>(self, *args, **kwargs).
FORWARDED = ("floor", "ceil", "trunc", "fix", "frac", "round", "log2", "log10", "exp2", "erf", "erfc", "erfinv",
             "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh",
             "acosh", "arccosh", "atanh", "arctanh", "atan2", "arctan2", "hypot", "copysign", "fmod", "remainder",
             "logaddexp", "logaddexp2", "lerp", "mm", "bmm", "isclose", "allclose", "equal", "bitwise_not",
             "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
             "logical_and", "logical_or", "logical_xor")
# In-place forms x.<name>_(...): the op's result written into x (functional.inplace).
IN_PLACE = ("floor", "ceil", "trunc", "fix", "frac", "round", "exp", "exp2", "expm1", "log", "log2", "log10",
            "log1p", "sqrt", "rsqrt", "abs", "neg", "sign", "reciprocal", "square", "sin", "cos", "tan", "asin",
            "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh",
            "atanh", "arctanh", "erf", "erfc", "erfinv", "sigmoid", "tanh", "relu", "atan2", "arctan2", "hypot",
            "copysign", "fmod", "remainder", "lerp", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
            "bitwise_left_shift", "bitwise_right_shift", "logical_not", "logical_and", "logical_or", "logical_xor")


def _forwarded(name: str) -> Callable[..., Any]:
    def method(self: "Tensor", *args: Any, **kwargs: Any) -> Any:
        return getattr(_F, name)(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``minitensor.{name}(self, ...)``."
    return method


def _in_place(name: str) -> Callable[..., Any]:
    def method(self: "Tensor", *args: Any, **kwargs: Any) -> Any:
        return _F.inplace(self, getattr(_F, name), *args, **kwargs)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In place: ``self`` becomes ``minitensor.{name}(self, ...)``."
    return method


class TensorMathMethods(TensorShapeMethods):
    """Shift operators here; the tables' methods are set on the class below."""

    __slots__ = ()

    def __lshift__(self, other: Any) -> "Tensor":
        return _F.bitwise_left_shift(self, other)

    def __rlshift__(self, other: Any) -> "Tensor":
        return _F.bitwise_left_shift(other, self)

    def __rshift__(self, other: Any) -> "Tensor":
        return _F.bitwise_right_shift(self, other)

    def __rrshift__(self, other: Any) -> "Tensor":
        return _F.bitwise_right_shift(other, self)

    def __ilshift__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.bitwise_left_shift, other)

    def __irshift__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.bitwise_right_shift, other)


for _name in FORWARDED:
    setattr(TensorMathMethods, _name, _forwarded(_name))
for _name in IN_PLACE:
    setattr(TensorMathMethods, _name + "_", _in_place(_name))
