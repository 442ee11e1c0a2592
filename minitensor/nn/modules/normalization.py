"""``LayerNorm`` and ``GroupNorm``."""
from __future__ import annotations

from typing import Any, Sequence

from ...tensor import Tensor
from ...creation import empty
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from .utils import optional_parameters


def reset_affine(weight: Tensor | None, bias: Tensor | None) -> None:
    """A normalisation's affine parameters at the identity: weight ones, bias zeros."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims (biased
    variance); weight (ones) and bias (zeros) have ``normalized_shape`` when ``elementwise_affine``."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalise (N, C, *) over groups of C / num_groups channels (and *), then weight[c] x + bias[c]."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        optional_parameters(self, affine, ("weight",), num_channels, device=device, dtype=dtype)
        optional_parameters(self, affine and bias, ("bias",), num_channels, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")
