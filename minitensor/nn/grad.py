"""``nn.grad``: the gradients of a convolution with respect to its input and its weight, as functions
(PyTorch's ``torch.nn.grad``): ``conv{1,2,3}d_input(input_size, weight, grad_output, ...)`` and
``conv{1,2,3}d_weight(input, weight_size, grad_output, ...)``.

A convolution y = conv(x, w) is linear in each argument, so its vector-Jacobian product at any point is the
same: each function runs the convolution's own backward (autograd's, the conv family's backward op) at a zero
placeholder of the requested size. The result is differentiable again when grad mode is on and an argument
requires grad (the backward is recorded, as PyTorch's ``convolution_backward``).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import autograd
from ..creation import zeros
from ..functional.conv import conv1d, conv2d, conv3d
from ..tensor import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

IntOrTuple = int | Sequence[int]


def _vjp(conv: Callable[..., Tensor], size: Sequence[int], other: Tensor, grad_output: Tensor, wrt_input: bool,
         **options: Any) -> Tensor:
    """d<grad_output, conv(x, w)>/d(x or w) with the other argument given; the one asked for has ``size``."""
    create_graph = autograd.is_grad_enabled() and (other.requires_grad or grad_output.requires_grad)
    with autograd.enable_grad():
        placeholder = zeros(tuple(size), dtype=grad_output.dtype, device=grad_output.device, requires_grad=True)
        x, w = (placeholder, other) if wrt_input else (other, placeholder)
        y = conv(x, w, None, **options)
        if tuple(y.shape) != tuple(grad_output.shape):
            raise RuntimeError(f"grad_output has shape {tuple(grad_output.shape)}, but the convolution gives "
                               f"{tuple(y.shape)}")
        grad, = autograd.grad(y, placeholder, grad_output, create_graph=create_graph)
    return grad


def conv1d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: IntOrTuple = 1,
                 padding: IntOrTuple = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """d loss / d input of conv1d: input_size (N, C_in, L), weight (C_out, C_in/groups, k), grad_output
    (N, C_out, L_out)."""
    return _vjp(conv1d, input_size, weight, grad_output, True, stride=stride, padding=padding, dilation=dilation,
                groups=groups)


def conv1d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: IntOrTuple = 1,
                  padding: IntOrTuple = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """d loss / d weight of conv1d: weight_size (C_out, C_in/groups, k)."""
    return _vjp(conv1d, weight_size, input, grad_output, False, stride=stride, padding=padding, dilation=dilation,
                groups=groups)


def conv2d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: IntOrTuple = 1,
                 padding: IntOrTuple = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """d loss / d input of conv2d: input_size (N, C_in, H, W), grad_output (N, C_out, H_out, W_out)."""
    return _vjp(conv2d, input_size, weight, grad_output, True, stride=stride, padding=padding, dilation=dilation,
                groups=groups)


def conv2d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: IntOrTuple = 1,
                  padding: IntOrTuple = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """d loss / d weight of conv2d: weight_size (C_out, C_in/groups, kH, kW)."""
    return _vjp(conv2d, weight_size, input, grad_output, False, stride=stride, padding=padding, dilation=dilation,
                groups=groups)


def conv3d_input(input_size: Sequence[int], weight: Tensor, grad_output: Tensor, stride: IntOrTuple = 1,
                 padding: IntOrTuple = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """d loss / d input of conv3d: input_size (N, C_in, D, H, W), grad_output (N, C_out, D_out, H_out, W_out)."""
    return _vjp(conv3d, input_size, weight, grad_output, True, stride=stride, padding=padding, dilation=dilation,
                groups=groups)


def conv3d_weight(input: Tensor, weight_size: Sequence[int], grad_output: Tensor, stride: IntOrTuple = 1,
                  padding: IntOrTuple = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """d loss / d weight of conv3d: weight_size (C_out, C_in/groups, kD, kH, kW)."""
    return _vjp(conv3d, weight_size, input, grad_output, False, stride=stride, padding=padding, dilation=dilation,
                groups=groups)
