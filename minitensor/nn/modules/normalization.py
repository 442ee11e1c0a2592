"""``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm`` and ``CrossMapLRN2d``."""
from __future__ import annotations

from typing import Any, Sequence

from ...creation import arange
from ...tensor import Tensor
from .. import functional as F, init
from .module import Module
from .utils import optional_parameters


class _AffineNorm(Module):
    """A normalisation followed by an optional elementwise affine map, whose parameters this holds."""

    weight: Tensor | None
    bias: Tensor | None
    eps: Any  # a float; RMSNorm's may be None (the input dtype's epsilon)

    def _affine_parameters(self, affine: bool, bias: bool, shape: Sequence[int], device: Any, dtype: Any) -> None:
        """weight and bias of ``shape`` when ``affine`` (bias only with ``bias``), None otherwise."""
        optional_parameters(self, affine, ("weight",), *shape, device=device, dtype=dtype)
        optional_parameters(self, affine and bias, ("bias",), *shape, device=device, dtype=dtype)
        self.reset_parameters()

    def _over_last_dims(self, normalized_shape: int | Sequence[int], eps: float | None, elementwise_affine: bool,
                        bias: bool, device: Any, dtype: Any) -> None:
        """The attributes and parameters of a norm over the last dims (LayerNorm's and RMSNorm's)."""
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self._affine_parameters(elementwise_affine, bias, self.normalized_shape, device, dtype)

    def reset_parameters(self) -> None:
        """The identity map: weight ones, bias zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)


class LayerNorm(_AffineNorm):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims (biased
    variance); weight (ones) and bias (zeros) have ``normalized_shape`` when ``elementwise_affine``."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self._over_last_dims(normalized_shape, eps, elementwise_affine, bias, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(_AffineNorm):
    """Normalise (N, C, *) over groups of C / num_groups channels (and *), then weight[c] x + bias[c]."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self._affine_parameters(affine, bias, (num_channels,), device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(_AffineNorm):
    """y = x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims; weight (ones) has
    ``normalized_shape`` when ``elementwise_affine``; eps None: the input dtype's machine epsilon."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self._over_last_dims(normalized_shape, eps, elementwise_affine, False, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """``F.local_response_norm`` across channels (AlexNet's LRN)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Lua Torch's cross-channel LRN on (N, C, H, W), with PyTorch's forward exactly:
    y_c = x_c (k + alpha / size * S_c) ^ -beta, S_c the sum of x_j^2 over j in [c - p + 1, c + p - 1] (clipped
    to [0, C)), p = (size - 1) // 2 + 1, plus x_0^2 again for c >= p (PyTorch's running-sum update never
    drops channel 0). S is one product with a constant (C, C) 0/1 window matrix; the gradient is autograd's,
    that of this forward (PyTorch's hand-written backward uses the symmetric window: docs/differences.md)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels, pre = input.shape[1], (self.size - 1) // 2 + 1
        j = arange(channels, device=input.device).unsqueeze(1)  # the summed channel
        c = arange(channels, device=input.device).unsqueeze(0)  # the output channel
        window = ((j >= c - pre + 1) & (j <= c + pre - 1)) | ((j == 0) & (c >= pre))
        sums = (input * input).transpose(1, -1).matmul(window.to(input.dtype)).transpose(1, -1)
        return input * (sums * (self.alpha / self.size) + self.k) ** -self.beta

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
