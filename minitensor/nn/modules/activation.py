"""Activation modules: thin wrappers that hold the options of their ``nn.functional`` counterparts."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .attention import MultiheadAttention  # noqa: F401  (torch.nn.modules.activation is its home in PyTorch)
from .module import Module


class _InplaceActivation(Module):
    """An activation with PyTorch's ``inplace`` flag, which its repr shows only when set."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return ", ".join(filter(None, (super().extra_repr(), "inplace=True" if self.inplace else "")))


class ReLU(_InplaceActivation):
    """max(x, 0)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)


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


class ELU(_InplaceActivation):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    _repr_options = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)


class GELU(Module):
    """x * Phi(x) (``approximate='tanh'``: the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    """x * sigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``."""

    _repr_options = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Softmax(Module):
    """exp(x_i) / sum_j exp(x_j) along ``dim``."""

    _repr_options = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)


class LogSoftmax(Softmax):
    """x_i - log(sum_j exp(x_j)) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)
