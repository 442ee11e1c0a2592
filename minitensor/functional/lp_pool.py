"""Power-average pooling (PyTorch's ``lp_pool1d/2d/3d``), composed as PyTorch composes it:
y = (sign(s) relu(|s|) * prod(kernel)) ** (1 / p), s = avg_pool(x ** p) without padding. The same ops give
the same gradients: a window whose sum of x**p is zero gets gradient zero where PyTorch's does (relu's
gradient at 0), and the same divisor in ceil mode (the average's, times the full kernel)."""
from __future__ import annotations

import math
from typing import Any

from ..autograd import function as _function
from ..tensor import Tensor
from .activation import relu
from .conv import IntPair, check_input, ntuple
from .pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d"]


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: IntPair, stride: IntPair | None = None,
              ceil_mode: bool = False) -> Tensor:
    """(N, C, L) or (C, L) -> (N, C, oL): (sum over each window of x**p) ** (1/p); p = inf is the max of
    |x|, p = -inf its min. ``stride`` defaults to ``kernel_size``."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: IntPair, stride: IntPair | None = None,
              ceil_mode: bool = False) -> Tensor:
    """(N, C, H, W) or (C, H, W) -> (N, C, oH, oW): (sum over each kH x kW window of x**p) ** (1/p)."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: IntPair, stride: IntPair | None = None,
              ceil_mode: bool = False) -> Tensor:
    """(N, C, D, H, W) or (C, D, H, W) -> (N, C, oD, oH, oW): (sum over each window of x**p) ** (1/p)."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


def _lp_pool(name: str, dims: int, input: Tensor, norm_type: float, kernel_size: IntPair,
             stride: IntPair | None, ceil_mode: bool) -> Tensor:
    # integers as PyTorch: x**p stays int64 for an int p and avg_pool truncates (avg_pool3d refuses them)
    check_input(name, input, integers=dims < 3, dims=dims)
    if _function.tracer is not None:  # an ONNX export: name this op, not the sign() it is built from
        from ..onnx.errors import UnsupportedOperatorError
        raise UnsupportedOperatorError(f"minitensor::{name}", _function.tracer.graph.opset, None,
                                       "the ONNX exporter has no conversion for it (ONNX's LpPool is not written)")
    kernel = ntuple(kernel_size, "kernel_size", name, dims)
    max_pool: Any = (max_pool1d, max_pool2d, max_pool3d)[dims - 1]
    if norm_type == math.inf:  # the limit p -> inf: PyTorch's max pooling of |x|
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    powered = input.pow(norm_type)
    if dims == 1:
        total = avg_pool1d(powered, kernel_size, stride, 0, ceil_mode)
    else:
        total = (avg_pool2d if dims == 2 else avg_pool3d)(powered, kernel_size, stride, 0, ceil_mode)
    return (total.sign() * relu(total.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)
