"""``TensorMathMethods``: the elementwise math, comparison and shift methods of ``Tensor`` that are one call
into ``minitensor.functional`` each (``x.tan()`` is ``functional.tan(x)``), and their in-place ``x.tan_()``
forms, made from the tables below; and the linear-algebra methods (``det``, ``svd``, ``addmm``...). ``_F`` is
bound by ``tensor.py`` as for ``tensor_methods.py``."""
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

# The pointwise ops of functional/special.py, the math and arithmetic families' later additions, nansum, nanmean
# and diff (whose functions take NumPy's axis= / keepdims= too); then products, statistics and index_reduce.
ADDED_FORWARDED = ("addcmul", "addcdiv", "xlogy", "logit", "sinc", "lgamma", "digamma", "i0", "nan_to_num", "heaviside",
                   "float_power", "clamp_min", "clamp_max", "nansum", "nanmean", "diff",
                   "movedim", "swapaxes", "dot", "mv", "diagflat", "addr", "split_with_sizes", "aminmax", "cov",
                   "corrcoef", "histogram", "index_reduce")
ADDED_IN_PLACE = ("addcmul", "addcdiv", "xlogy", "logit", "sinc", "lgamma", "digamma", "i0", "nan_to_num", "heaviside",
                  "clamp_min", "clamp_max", "addr", "index_reduce", "addmm", "addmv", "baddbmm", "addbmm")
# PyTorch's other names (functional/aliases.py) and smaller pointwise ops (functional/pointwise.py, special.py).
ALIAS_FORWARDED = ("absolute", "divide", "multiply", "subtract", "negative", "positive", "greater", "greater_equal",
                   "less", "less_equal", "not_equal", "true_divide", "floor_divide", "sgn", "deg2rad", "rad2deg",
                   "fmax", "fmin", "gcd", "lcm", "ldexp", "frexp", "nextafter", "isposinf", "isneginf", "isreal",
                   "igamma", "igammac", "mvlgamma", "hardshrink", "prelu", "renorm", "conj", "conj_physical",
                   "resolve_conj", "resolve_neg", "is_conj", "is_neg", "conj_physical_")
ALIAS_IN_PLACE = ("absolute", "divide", "multiply", "subtract", "negative", "true_divide", "floor_divide", "clip",
                  "sgn", "deg2rad", "rad2deg", "gcd", "lcm", "ldexp", "nextafter", "igamma", "igammac", "mvlgamma",
                  "renorm")
# In-place comparisons x.eq_(y): 1 / 0 in x's dtype, copied in, so nothing flows back to x's old values.
COMPARISON_IN_PLACE = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
                       "not_equal")


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


def _compared_in_place(name: str) -> Callable[..., Any]:
    def method(self: "Tensor", other: Any) -> Any:
        out = getattr(_F, name)(self, other)
        if out.shape != self.shape:  # copy_ would broadcast (1,) into (); PyTorch's in-place ops refuse
            raise RuntimeError(f"output with shape {tuple(self.shape)} doesn't match the broadcast shape "
                               f"{tuple(out.shape)}")
        return _F.copy_(self, out)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In place: ``self`` becomes ``minitensor.{name}(self, other)`` as 1 / 0 in its dtype."
    return method


def _polygamma(input: "Tensor", n: int) -> "Tensor":
    """polygamma with the tensor first, for ``inplace``."""
    return _F.polygamma(n, input)


class TensorMathMethods(TensorShapeMethods):
    """Shift operators and linear algebra here; the tables' methods are set on the class below."""

    __slots__ = ()

    @property
    def real(self) -> "Tensor":
        """``self``: minitensor's tensors are real (functional/conjugation.py)."""
        return _F.real(self)

    @property
    def imag(self) -> "Tensor":
        return _F.imag(self)

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

    def polygamma(self, n: int) -> "Tensor":
        """``minitensor.polygamma(n, self)``."""
        return _F.polygamma(n, self)

    def polygamma_(self, n: int) -> "Tensor":
        return _F.inplace(self, _polygamma, n)

    # ------------------------------------------------------------------------------ linear algebra
    def det(self) -> "Tensor":
        """det(A) over the last two dims (batched)."""
        return _F.det(self)

    def logdet(self) -> "Tensor":
        """log det(A): nan where det(A) < 0, -inf where it is 0."""
        return _F.logdet(self)

    def slogdet(self) -> Any:
        """(sign, log |det A|), the form that neither overflows nor underflows."""
        return _F.slogdet(self)

    def inverse(self) -> "Tensor":
        """A^-1 (``minitensor.linalg.inv``)."""
        return _F.inverse(self)

    def matrix_power(self, n: int) -> "Tensor":
        return _F.matrix_power(self, n)

    def pinverse(self, rcond: float = 1e-15) -> "Tensor":
        return _F.pinverse(self, rcond)

    def cholesky(self, upper: bool = False) -> "Tensor":
        return _F.cholesky(self, upper=upper)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        return _F.svd(self, some, compute_uv)

    def qr(self, some: bool = True) -> Any:
        return _F.qr(self, some)

    def cholesky_solve(self, input2: "Tensor", upper: bool = False) -> "Tensor":
        return _F.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> "Tensor":
        return _F.cholesky_inverse(self, upper)

    def matrix_exp(self) -> "Tensor":
        return _F.matrix_exp(self)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
        return _F.lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: "Tensor", LU_pivots: "Tensor") -> "Tensor":
        return _F.lu_solve(self, LU_data, LU_pivots)

    def orgqr(self, input2: "Tensor") -> "Tensor":
        return _F.orgqr(self, input2)

    def geqrf(self) -> Any:
        return _F.geqrf(self)

    def outer(self, vec2: "Tensor") -> "Tensor":
        return _F.outer(self, vec2)

    def ger(self, vec2: "Tensor") -> "Tensor":
        return _F.outer(self, vec2)

    def inner(self, other: "Tensor") -> "Tensor":
        return _F.inner(self, other)

    def vdot(self, other: "Tensor") -> "Tensor":
        return _F.vdot(self, other)

    def kron(self, other: "Tensor") -> "Tensor":
        return _F.kron(self, other)

    def trace(self) -> "Tensor":
        return _F.trace(self)

    def cross(self, other: "Tensor", dim: int | None = None) -> "Tensor":
        return _F.cross(self, other, dim)

    def addmm(self, mat1: "Tensor", mat2: "Tensor", *, beta: Any = 1, alpha: Any = 1) -> "Tensor":
        return _F.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat: "Tensor", vec: "Tensor", *, beta: Any = 1, alpha: Any = 1) -> "Tensor":
        return _F.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: "Tensor", batch2: "Tensor", *, beta: Any = 1, alpha: Any = 1) -> "Tensor":
        return _F.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self, batch1: "Tensor", batch2: "Tensor", *, beta: Any = 1, alpha: Any = 1) -> "Tensor":
        return _F.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)


for _name in FORWARDED + ADDED_FORWARDED + ALIAS_FORWARDED:
    setattr(TensorMathMethods, _name, _forwarded(_name))
for _name in IN_PLACE + ADDED_IN_PLACE + ALIAS_IN_PLACE:
    setattr(TensorMathMethods, _name + "_", _in_place(_name))
for _name in COMPARISON_IN_PLACE:
    setattr(TensorMathMethods, _name + "_", _compared_in_place(_name))
