"""Activation modules: thin wrappers that hold the options of their ``nn.functional`` counterparts."""
from __future__ import annotations

from typing import Any, Callable, TypeVar, cast

from ...creation import full
from ...tensor import Tensor
from .. import functional as F, init
from .attention import MultiheadAttention  # noqa: F401  (torch.nn.modules.activation is its home in PyTorch)
from .module import Module
from ..parameter import Parameter


M = TypeVar("M", bound=Module)


def _activation(base: type[M], name: str, function: Callable[..., Tensor], doc: str) -> type[M]:
    """The activation class ``name``: ``base``, whose forward calls ``function`` as its ``_function``."""
    return cast("type[M]", type(name, (base,), {"_function": staticmethod(function), "__doc__": doc,
                                                "__module__": __name__}))


class _Activation(Module):
    """An activation without options: forward is ``_function(input)``."""

    _function: Callable[..., Tensor]

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input)


class _InplaceActivation(Module):
    """An activation with PyTorch's ``inplace`` flag, which its repr shows only when set; forward is
    ``_function(input, inplace=inplace)`` unless it has other options."""

    _function: Callable[..., Tensor]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return ", ".join(filter(None, (super().extra_repr(), "inplace=True" if self.inplace else "")))


class _SilentInplaceActivation(_InplaceActivation):
    """An activation whose repr shows no options, not even ``inplace`` (as PyTorch's)."""

    def extra_repr(self) -> str:
        return ""


ReLU = _activation(_InplaceActivation, "ReLU", F.relu, "max(x, 0).")
SiLU = _activation(_InplaceActivation, "SiLU", F.silu, "x * sigmoid(x).")
SELU = _activation(_InplaceActivation, "SELU", F.selu, "scale * elu(x, alpha) with SELU's constants.")
Mish = _activation(_InplaceActivation, "Mish", F.mish, "x * tanh(softplus(x)).")
Hardsigmoid = _activation(_SilentInplaceActivation, "Hardsigmoid", F.hardsigmoid, "relu6(x + 3) / 6.")
Hardswish = _activation(_SilentInplaceActivation, "Hardswish", F.hardswish, "x * relu6(x + 3) / 6.")
Sigmoid = _activation(_Activation, "Sigmoid", F.sigmoid, "1 / (1 + exp(-x)).")
Tanh = _activation(_Activation, "Tanh", F.tanh, "(exp(x) - exp(-x)) / (exp(x) + exp(-x)).")
LogSigmoid = _activation(_Activation, "LogSigmoid", F.logsigmoid, "log(sigmoid(x)).")
Softsign = _activation(_Activation, "Softsign", F.softsign, "x / (1 + |x|).")
Tanhshrink = _activation(_Activation, "Tanhshrink", F.tanhshrink, "x - tanh(x).")


class Hardtanh(_InplaceActivation):
    """clamp(x, min_val, max_val)."""

    _repr_options: tuple[str, ...] = ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    _repr_options = ()

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)


class LeakyReLU(_InplaceActivation):
    """x for x > 0, negative_slope * x otherwise."""

    _repr_options = ("negative_slope",)

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)


class RReLU(_InplaceActivation):
    """x for x > 0, a * x otherwise: a ~ U(lower, upper) per element in training, (lower + upper) / 2 in eval."""

    _repr_options = ("lower", "upper")

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.lower = lower
        self.upper = upper

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)


class _ExponentialActivation(_InplaceActivation):
    """An exponential linear unit of scale ``alpha``: forward is ``_function(input, alpha, inplace)``."""

    _repr_options = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, self.alpha, self.inplace)


ELU = _activation(_ExponentialActivation, "ELU", F.elu, "x for x > 0, alpha * (exp(x) - 1) otherwise.")
CELU = _activation(_ExponentialActivation, "CELU", F.celu, "x for x > 0, alpha * (exp(x / alpha) - 1) otherwise.")


class GELU(Module):
    """x * Phi(x) (``approximate='tanh'``: the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``."""

    _repr_options = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)


class _SoftmaxActivation(Module):
    """A normalisation along ``dim``: forward is ``_function(input, dim)``."""

    _function: Callable[..., Tensor]
    _repr_options = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, self.dim)


Softmax = _activation(_SoftmaxActivation, "Softmax", F.softmax, "exp(x_i) / sum_j exp(x_j) along ``dim``.")
LogSoftmax = _activation(_SoftmaxActivation, "LogSoftmax", F.log_softmax,
                         "x_i - log(sum_j exp(x_j)) along ``dim``.")
Softmin = _activation(_SoftmaxActivation, "Softmin", F.softmin, "softmax(-x) along ``dim``.")


class PReLU(Module):
    """x for x > 0, weight * x otherwise, with a learnt slope (one, or one per channel)."""

    _repr_options = ("num_parameters",)

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(full((num_parameters,), init, device=device, dtype=dtype))

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)


class GLU(Module):
    """a * sigmoid(b) for the two halves a, b of the input along ``dim``."""

    _repr_options = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)


class Threshold(_InplaceActivation):
    """x where x > threshold, ``value`` elsewhere."""

    _repr_options = ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)


class _Shrink(Module):
    """A shrinkage by ``lambd``: forward is ``_function(input, lambd)``."""

    _function: Callable[..., Tensor]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


Hardshrink = _activation(_Shrink, "Hardshrink", F.hardshrink, "x where |x| > lambd, 0 elsewhere.")
Softshrink = _activation(_Shrink, "Softshrink", F.softshrink, "x -+ lambd beyond +-lambd, 0 between.")


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
