"""``Identity``, ``Linear`` (and ``NonDynamicallyQuantizableLinear``, where PyTorch has it) and ``Bilinear``."""
from __future__ import annotations

import math
from typing import Any

from ...tensor import Tensor
from ...creation import empty
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module


class Identity(Module):
    """Returns its input; any constructor arguments are ignored (a placeholder, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


def reset_bias_from_fan_in(bias: Tensor | None, weight: Tensor) -> None:
    """PyTorch's default bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in taken from ``weight``."""
    if bias is None:
        return
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    init.uniform_(bias, -bound, bound)


def _weight_and_bias(module: Module, shape: tuple[int, ...], bias: bool, device: Any, dtype: Any) -> None:
    """A weight of ``shape`` and (when ``bias``) a bias of shape[0] on ``module``, then its reset_parameters."""
    module.weight = Parameter(empty(*shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(empty(shape[0], device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


class Linear(Module):
    """y = x W^T + b for x of shape (*, in_features); W (out_features, in_features), b (out_features,).

    Init (PyTorch's): W ~ kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)), and
    b ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        reset_bias_from_fan_in(self.bias, self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under PyTorch's name for ``MultiheadAttention.out_proj`` (a marker for its quantization
    tooling; nothing differs here). Here, in ``nn.modules.linear``, as in PyTorch: programs name it there."""


class Bilinear(Module):
    """y = x1^T W x2 + b: x1 (*, in1_features), x2 (*, in2_features), W (out_features, in1_features,
    in2_features), b (out_features,); W and b ~ U(-1/sqrt(in1), 1/sqrt(in1)) (PyTorch's init)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
