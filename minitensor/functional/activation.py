"""Activations: each a Function on the backend's forward/backward pair, and its public function.

Most are one ``_Pointwise`` row: the backend's forward and backward methods and whether the backward needs
the output ``y`` (saved when the derivative is a function of it, as for relu or sigmoid) or the input ``x``.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ._util import keep_bfloat16, named, norm_dim, to_float
from .indexing import where
from .inplace import inplace as _inplace
from ..backends.base import Backend
from ..amp.autocast_mode import cast_early
from ..amp.policy import Prelu

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu", "silu",
           "softplus", "sigmoid", "tanh", "hardtanh", "hardtanh_", "softmax", "log_softmax"]
__all__ += ["celu", "celu_", "selu", "selu_", "mish", "hardsigmoid", "hardswish", "logsigmoid", "softsign",
            "softmin"]
__all__ += ["prelu", "glu", "threshold", "threshold_", "hardshrink", "softshrink", "tanhshrink"]
__all__ += ["rrelu", "rrelu_"]


class _Pointwise(ArrayFunction):
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
        saved, = ctx.saved_arrays
        return ctx.df(B, gy, saved, **ctx.params, **ctx.backward_params)


def _pointwise(name: str, f: Callable[..., Any], df: Callable[..., Any], save_output: bool = True,
               copies_output_on_write: bool = False, **backward_params: Any) -> type[ArrayFunction]:
    # PyTorch's saved name: "result" or "self" as here, except where PyTorch saves the input and this the output
    names = () if copies_output_on_write else ("result",) if save_output else ("self",)
    return type(name, (_Pointwise,), {"f": staticmethod(f), "df": staticmethod(df), "save_output": save_output,
                                      "copies_output_on_write": copies_output_on_write, "saved_names": names,
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
Celu = _pointwise("Celu", lambda B, x, **p: B.celu(x, **p), lambda B, gy, x, **p: B.celu_backward(gy, x, **p),
                  save_output=False)
Selu = _pointwise("Selu", lambda B, x: B.selu(x), lambda B, gy, x: B.selu_backward(gy, x), save_output=False)
Mish = _pointwise("Mish", lambda B, x: B.mish(x), lambda B, gy, x: B.mish_backward(gy, x), save_output=False)
Hardsigmoid = _pointwise("Hardsigmoid", lambda B, x: B.hardsigmoid(x),
                         lambda B, gy, x: B.hardsigmoid_backward(gy, x), save_output=False)
Hardswish = _pointwise("Hardswish", lambda B, x: B.hardswish(x), lambda B, gy, x: B.hardswish_backward(gy, x),
                       save_output=False)
Logsigmoid = _pointwise("Logsigmoid", lambda B, x: B.logsigmoid(x), lambda B, gy, x: B.logsigmoid_backward(gy, x),
                        save_output=False)
Softsign = _pointwise("Softsign", lambda B, x: B.softsign(x), lambda B, gy, x: B.softsign_backward(gy, x),
                      save_output=False)
# PyTorch's nodes: selu is elu with its constants, logsigmoid's spelling, softsign is x / (1 + |x|)
Selu.torch_name, Logsigmoid.torch_name, Softsign.torch_name = "EluBackward0", "LogSigmoidBackward0", "DivBackward0"
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
    if dim is None:  # PyTorch's _get_softmax_dim: deprecated, still honoured
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                      "dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if input.ndim in (0, 1, 3) else 1
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


def _celu(input: Tensor, alpha: float) -> Tensor:
    return Celu.apply(to_float(input), alpha=alpha)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, alpha * (exp(x / alpha) - 1) elsewhere."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu: alpha must not be 0")
    return _maybe_inplace(input, inplace, _celu, float(alpha), saves_input=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def _unary(fn: type[ArrayFunction]) -> Callable[[Tensor], Tensor]:
    """The public op of a parameterless activation: integer inputs give the default float dtype."""
    return lambda input: fn.apply(to_float(input))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha), alpha = 1.6732632423543772, scale = 1.0507009873554805."""
    return _maybe_inplace(input, inplace, _unary(Selu), saves_input=True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _maybe_inplace(input, inplace, _unary(Mish), saves_input=True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, _unary(Hardsigmoid), saves_input=True)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, _unary(Hardswish), saves_input=True)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), finite for every finite x."""
    return Logsigmoid.apply(to_float(input))


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return Softsign.apply(to_float(input))


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmax(-x) along ``dim``; ``dtype`` casts the input first."""
    x, axis = _softmax_input("softmin", input, dim, dtype)
    return softmax(-x, axis)


# ------------------------------------------------- activations composed of other ops (autograd differentiates)
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, weight * x elsewhere; ``weight`` has one slope or one per channel (dim 1). Autocast
    runs it in the 16-bit dtype, as PyTorch's lists do."""
    input, weight = cast_early(Prelu, input, weight)
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    slope = weight.reshape(()) if weight.numel() == 1 else weight.reshape(channels, *(1,) * (input.ndim - 2))
    return named(where(input > 0, input, slope * input), "PreluKernelBackward0")


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = norm_dim(dim, input.ndim)
    if input.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {input.shape[axis]}")
    a, b = input.chunk(2, axis)
    return named(a * sigmoid(b), "GluBackward0")


def _threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return named(where(input <= threshold, value, input), "ThresholdBackward0")


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where x <= threshold, x elsewhere (NaN stays NaN, with gradient 1, as PyTorch)."""
    return _maybe_inplace(input, inplace, _threshold, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _maybe_inplace(input, True, _threshold, threshold, value)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool) -> Tensor:
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    slope = input.new_empty(input.shape).uniform_(lower, upper)
    return where(input > 0, input, input * slope)


def rrelu(input: Tensor, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """x where x > 0, a * x elsewhere, a ~ U(lower, upper) per element in training, (lower + upper) / 2 in
    evaluation."""
    return _maybe_inplace(input, inplace, _rrelu, float(lower), float(upper), training, saves_input=True)


def rrelu_(input: Tensor, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 where -lambd <= x <= lambd, x elsewhere (nan stays nan)."""
    return where((input >= -lambd) & (input <= lambd), 0.0, input)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between (lambd >= 0); NaN stays NaN."""
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be in range [0, inf), but found {lambd}")
    # NaN stays NaN; between the bounds PyTorch's x * 0 (a negative x gives -0, no gradient), clamped here so
    # that the infinities outside make no 0 * inf warning
    zero = input.detach().clamp(-0.0, 0.0)
    return where(input > lambd, input - lambd, where(input >= -lambd, zero, input + lambd))


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - tanh(input)
