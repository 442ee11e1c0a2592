"""The sparse COO versions of the zero-preserving unary ops (f(0) = 0: abs, sqrt, sin, tanh, relu, sign,
floor, isnan...), as PyTorch's sparse kernels define them: f on the values of the coalesced tensor, rebuilt on
its indices (coalesced, as PyTorch's results). The ops with f(0) != 0 (exp, cos, sigmoid, isfinite...) would
fill every cell, and keep PyTorch's NotImplementedError.

Like ``sparse_ops``, each is an entry of ``SPARSE_KERNELS`` under the dense op's Function, run by
``Function.apply`` only when the dense forward refuses a sparse input. The differentiable ones apply their own
Function to the differentiable ``values()``, so a sparse input's gradient is ``f'(v) * g`` on its cells (a
sparse tensor, as PyTorch's); PyTorch itself has no sparse backward for some of them (sin, tanh, erf...), where
this gives the dense op's gradient at the stored entries.
"""
from __future__ import annotations

from math import inf
from typing import Any, Callable

from ..autograd.function import SPARSE_KERNELS, ArrayFunction
from ..backends.generic.sparse import SparseLayoutError, sparse_op_error
from ..tensor import Tensor
from . import activation, math
from ._util import NoGrad
from .sparse_ops import _coalesced, _rebuilt

# The differentiable Functions with f(0) = 0 that PyTorch runs on sparse COO (PiecewiseConstant: sign, sgn, floor,
# ceil, round, trunc on floats; the integer ones go through NoGrad below).
_ZERO_PRESERVING: tuple[type[ArrayFunction], ...] = (
    math.Abs, math.Sqrt, math.Square, math.Sin, math.Tan, math.Asin, math.Atan, math.Sinh, math.Asinh, math.Atanh,
    math.Expm1, math.Log1p, math.Erf, math.Erfinv, math.Frac, math.NanToNum, math.PiecewiseConstant,
    activation.Relu, activation.Tanh)

# The array ops without a gradient (bool results, integer rounding) that PyTorch runs on sparse COO, by the name
# the sparse array's refusal gives: the others sharing NoGrad (comparisons, logical_not, isfinite) refuse there.
_NO_GRAD_OPS = frozenset({"abs", "absolute", "sign", "floor", "ceil", "trunc", "rint", "round", "around", "isnan",
                          "isinf", "signbit"})


def _on_values(cls: type[ArrayFunction]) -> Callable[..., Tensor]:
    """The sparse kernel of ``cls``: cls on the coalesced values (the other arguments are numbers or callables)."""
    def kernel(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        s, v = _coalesced(input)
        return _rebuilt(s, cls.apply(v, *args, **kwargs))
    kernel.__name__ = f"sparse_{cls.__name__.lower()}"
    return kernel


def _no_grad(*inputs: Any, op: Callable[..., Any]) -> Tensor:
    """NoGrad's sparse kernel: ``op`` on the values when it is one of PyTorch's sparse unary ops (``x == inf``
    and ``x == -inf`` too: isposinf, isneginf), else the sparse array's own refusal, which names the op as
    PyTorch's error does."""
    input, *rest = inputs
    try:
        op(input.device.backend, input.array, *rest)
    except SparseLayoutError as e:
        unary = not rest and e.op in _NO_GRAD_OPS
        if not (unary or (e.op == "equal" and len(rest) == 1 and rest[0] in (inf, -inf))):
            raise
    else:  # an op that went through on a sparse array: no sparse version of it
        raise sparse_op_error("NoGrad", input.device.type == "cuda")
    s, v = _coalesced(input.detach())
    return _rebuilt(s, NoGrad.apply(v, *rest, op=op))


SPARSE_KERNELS.update({cls: _on_values(cls) for cls in _ZERO_PRESERVING})
SPARSE_KERNELS[NoGrad] = _no_grad
