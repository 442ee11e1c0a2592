"""PyTorch's other names for existing ops (``torch.absolute`` is ``torch.abs``...), and its top-level
functions that are a Tensor method (``torch.exp_(x)`` is ``x.exp_()``, ``torch.is_nonzero(x)`` is
``x.is_nonzero()``). Each alias is the same function object as its op, or one line over it."""
from __future__ import annotations

from typing import Any, Callable

from ..tensor import Tensor
from .arithmetic import div, ge, gt, le, lt, mul, ne, neg, sub
from ._util import named
from .math import abs, sign

__all__ = ["absolute", "divide", "multiply", "subtract", "negative", "positive", "greater", "greater_equal", "less",
           "less_equal", "not_equal", "sgn", "rsub", "fill"]

absolute, divide, multiply, subtract, negative, sgn = abs, div, mul, sub, neg, sign
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def positive(input: Tensor) -> Tensor:
    """``input`` itself (``+x``); PyTorch refuses bool tensors."""
    if input.array.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """other - alpha * input (``sub`` with the operands swapped)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rsub(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    out = sub(other, input, alpha=alpha)  # sub names rsub.Scalar's node RsubBackward1; rsub.Tensor's is ...0
    return named(out, "RsubBackward0") if isinstance(other, Tensor) else out


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like ``input`` holding ``value`` everywhere (out-of-place ``fill_``)."""
    return input.clone().fill_(value)


def _method(name: str) -> Callable[..., Any]:
    """``minitensor.<name>(input, ...)``: the Tensor method ``input.<name>(...)``."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``."
    return function


# PyTorch's top-level in-place functions and tensor queries, each its Tensor method.
METHODS = ("abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_", "arcsin_",
           "arcsinh_", "arctan_", "arctanh_", "ceil_", "floor_", "round_", "trunc_", "fix_", "frac_", "cos_", "cosh_",
           "sin_", "sinh_", "tan_", "tanh_", "exp_", "exp2_", "expm1_", "log_", "log10_", "log1p_", "log2_", "sqrt_",
           "rsqrt_", "square_", "reciprocal_", "neg_", "negative_", "sigmoid_", "relu_", "erf_", "erfc_", "sinc_",
           "i0_", "logit_", "xlogy_", "nan_to_num_", "clamp_", "clamp_min_", "clamp_max_", "clip_", "fill_",
           "zero_", "detach_", "deg2rad_", "rad2deg_", "gcd_", "lcm_", "ldexp_", "is_signed", "is_nonzero",
           "is_same_size", "get_device", "addmv_", "adjoint", "as_strided_", "index_put_",
           "resize_as_", "is_distributed")
for _name in METHODS:
    globals()[_name] = _method(_name)
__all__ += list(METHODS)
