"""Activations: each a Function on the backend's forward/backward pair, and its public function.

Most are one ``_Pointwise`` row: the backend's forward and backward methods and whether the backward needs
the output ``y`` (saved when the derivative is a function of it, as for relu or sigmoid) or the input ``x``.
"""
from __future__ import annotations

from typing import Any, Callable

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import keep_bfloat16, norm_dim, to_float
from .inplace import inplace as _inplace
from ..backends.base import Backend

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu", "silu",
           "softplus", "sigmoid", "tanh", "hardtanh", "hardtanh_", "softmax", "log_softmax"]


class _Pointwise(Function):
    """y = f(B, x, **params); backward is df(B, gy, y or x, **params, **backward_params)."""
    f: Callable[..., Any]
    df: Callable[..., Any]
    save_output = True
    backward_params: dict[str, Any] = {}

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, **params: Any) -> Any:
        y = keep_bfloat16(ctx.f(B, x, **params), x)
        ctx.params = params
        ctx.save_for_backward(y if ctx.save_output else x)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        saved, = ctx.saved_tensors
        return ctx.df(B, gy, saved, **ctx.params, **ctx.backward_params)


def _pointwise(name: str, f: Callable[..., Any], df: Callable[..., Any], save_output: bool = True,
               copies_output_on_write: bool = False, **backward_params: Any) -> type[Function]:
    return type(name, (_Pointwise,), {"f": staticmethod(f), "df": staticmethod(df), "save_output": save_output,
                                      "copies_output_on_write": copies_output_on_write,
                                      "backward_params": backward_params, "__module__": __name__})


def _relu(B: Backend, x: Any) -> Any:
    return B.relu(x)


def _leaky_relu_forward(B: Backend, x: Any, **p: Any) -> Any:
    return B.leaky_relu(x, **p)


def _leaky_relu_backward(B: Backend, gy: Any, s: Any, **p: Any) -> Any:
    return B.leaky_relu_backward(gy, s, **p)


def _elu_forward(B: Backend, x: Any, **p: Any) -> Any:
    return B.elu(x, **p)


def _elu_backward(B: Backend, gy: Any, s: Any, **p: Any) -> Any:
    return B.elu_backward(gy, s, **p)


Relu = _pointwise("Relu", _relu, lambda B, gy, y: B.relu_backward(gy, y))
Sigmoid = _pointwise("Sigmoid", lambda B, x: B.sigmoid(x), lambda B, gy, y: B.sigmoid_backward(gy, y))
Tanh = _pointwise("Tanh", lambda B, x: B.tanh(x), lambda B, gy, y: B.tanh_backward(gy, y))
# These three save y where PyTorch saves x (same gradient, y is what inplace=True leaves): see Function.
Hardtanh = _pointwise("Hardtanh", lambda B, x, **p: B.hardtanh(x, **p),
                      lambda B, gy, y, **p: B.hardtanh_backward(gy, y, **p), copies_output_on_write=True)
LeakyRelu = _pointwise("LeakyRelu", _leaky_relu_forward, _leaky_relu_backward,
                       copies_output_on_write=True)  # y has x's sign (slope > 0)
LeakyReluFromInput = _pointwise("LeakyReluFromInput", _leaky_relu_forward, _leaky_relu_backward,
                                save_output=False)  # slope < 0
Elu = _pointwise("Elu", _elu_forward, _elu_backward, copies_output_on_write=True,
                 is_result=True)  # alpha >= 0: y has x's sign
EluFromInput = _pointwise("EluFromInput", _elu_forward, _elu_backward, save_output=False,
                          is_result=False)  # alpha < 0
Gelu = _pointwise("Gelu", lambda B, x, **p: B.gelu(x, **p), lambda B, gy, x, **p: B.gelu_backward(gy, x, **p),
                  save_output=False)
Silu = _pointwise("Silu", lambda B, x: B.silu(x), lambda B, gy, x: B.silu_backward(gy, x), save_output=False)
Softplus = _pointwise("Softplus", lambda B, x, **p: B.softplus(x, **p),
                      lambda B, gy, x, **p: B.softplus_backward(gy, x, **p), save_output=False)
Softmax = _pointwise("Softmax", lambda B, x, **p: B.softmax(x, **p),
                     lambda B, gy, y, **p: B.softmax_backward(gy, y, **p))
LogSoftmax = _pointwise("LogSoftmax", lambda B, x, **p: B.log_softmax(x, **p),
                        lambda B, gy, y, **p: B.log_softmax_backward(gy, y, **p))


def _maybe_inplace(input: Tensor, inplace: bool, fn: Callable[..., Tensor], *args: Any,
                   saves_input: bool = False) -> Tensor:
    """``fn(input, *args)``, written into ``input`` when ``inplace`` (PyTorch's ``inplace=True``)."""
    if not inplace:
        return fn(input, *args)
    if saves_input and input.requires_grad:
        # The op keeps x for its backward and x's memory is about to take y: differentiate a copy.
        return _inplace(input, lambda t, *a: fn(t.clone(), *a), *args)
    return _inplace(input, fn, *args)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); ``inplace=True`` writes the result into ``input``."""
    return _maybe_inplace(input, inplace, Relu.apply)


def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)); integer inputs give the default float dtype."""
    return Sigmoid.apply(to_float(input))


def tanh(input: Tensor) -> Tensor:
    return Tanh.apply(to_float(input))


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    return Hardtanh.apply(input, min_val=min_val, max_val=max_val)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val); the gradient is 0 at the ends and beyond (as PyTorch)."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
    return _maybe_inplace(input, inplace, _hardtanh, float(min_val), float(max_val))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _leaky_relu(input: Tensor, negative_slope: float) -> Tensor:
    fn = LeakyRelu if negative_slope >= 0 else LeakyReluFromInput
    return fn.apply(input, negative_slope=negative_slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, negative_slope * x elsewhere."""
    return _maybe_inplace(input, inplace, _leaky_relu, float(negative_slope),
                          saves_input=negative_slope < 0)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def _elu(input: Tensor, alpha: float) -> Tensor:
    return (Elu if alpha >= 0 else EluFromInput).apply(to_float(input), alpha=alpha)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
    return _maybe_inplace(input, inplace, _elu, float(alpha), saves_input=alpha < 0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: 0.5 x (1 + erf(x / sqrt(2))) with approximate='none',
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) with approximate='tanh'."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu.apply(to_float(input), approximate=approximate)


def _silu(input: Tensor) -> Tensor:
    return Silu.apply(to_float(input))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    return _maybe_inplace(input, inplace, _silu, saves_input=True)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    return Softplus.apply(to_float(input), beta=float(beta), threshold=float(threshold))


def _softmax_input(name: str, input: Tensor, dim: int | None, dtype: Any) -> tuple[Tensor, int]:
    if dim is None:
        raise TypeError(f"{name}() needs dim: the implicit choice of dim is deprecated in PyTorch and "
                        f"not supported here; pass e.g. {name}(x, dim=-1)")
    if dtype is not None:
        input = input.to(dtype)
    return to_float(input), norm_dim(dim, input.ndim)


def softmax(input: Tensor, dim: int | None = None, *, dtype: Any = None) -> Tensor:
    """exp(x_i) / sum_j exp(x_j) along ``dim`` (the max is subtracted first, so nothing overflows);
    ``dtype`` casts the input first."""
    x, axis = _softmax_input("softmax", input, dim, dtype)
    if x.ndim == 0:  # a 0-d tensor is its own row: 1 (the backend's kernels work on arrays with an axis)
        return Softmax.apply(x.reshape(1), axis=0).reshape(())
    return Softmax.apply(x, axis=axis)


def log_softmax(input: Tensor, dim: int | None = None, *, dtype: Any = None) -> Tensor:
    """x_i - log(sum_j exp(x_j)) along ``dim``, stable for any finite x."""
    x, axis = _softmax_input("log_softmax", input, dim, dtype)
    return LogSoftmax.apply(x, axis=axis)
