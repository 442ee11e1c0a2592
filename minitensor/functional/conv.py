"""Convolutions: ``conv2d`` and ``conv_transpose2d`` (PyTorch's signatures), on the backend's im2col GEMMs.

Shapes: input (N, C_in, H, W) or unbatched (C_in, H, W); conv2d weight (C_out, C_in/groups, kH, kW);
conv_transpose2d weight (C_in, C_out/groups, kH, kW); bias (C_out,).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

from ..autograd.function import Function
from ..tensor import Tensor
from ..backends.base import Backend
from ..amp.autocast_mode import cast_early

__all__ = ["conv2d", "conv_transpose2d"]

IntPair = int | Sequence[int]


class Conv2d(Function):
    """y[n, o] = b[o] + sum over o's group of channels c and offsets (i, j) of
    w[o, c, i, j] * x_pad[n, c, oh*s_h + i*d_h, ow*s_w + j*d_w]."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, weight: Any, bias: Any, *, stride: tuple[int, int],
                padding: tuple[int, int, int, int], dilation: tuple[int, int], groups: int) -> Any:
        ctx.params = (stride, padding, dilation, groups)
        ctx.save_for_backward(x, weight)
        return B.conv2d(x, weight, bias, stride, padding, dilation, groups)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, weight = ctx.saved_tensors
        return B.conv2d_backward(gy, x, weight, *ctx.params, needs=tuple(ctx.needs_input_grad))  # type: ignore[misc]


class ConvTranspose2d(Function):
    """The adjoint of Conv2d in its input: each input pixel spreads w[c_in, :, i, j] * x over the
    output, at (h*s - p + i*d, w*s - p + j*d)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, weight: Any, bias: Any, *, stride: tuple[int, int],
                padding: tuple[int, int], output_padding: tuple[int, int], dilation: tuple[int, int],
                groups: int) -> Any:
        ctx.params = (stride, padding, output_padding, dilation, groups)
        ctx.save_for_backward(x, weight)
        return B.conv_transpose2d(x, weight, bias, stride, padding, output_padding, dilation, groups)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, weight = ctx.saved_tensors
        return B.conv_transpose2d_backward(gy, x, weight, *ctx.params, needs=tuple(ctx.needs_input_grad))  # type: ignore[misc]


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
           padding: IntPair | str = 0, dilation: IntPair = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of (N, C_in, H, W) with weight (C_out, C_in/groups, kH, kW)
    -> (N, C_out, oH, oW), oH = floor((H + pad_top + pad_bottom - dilation*(kH-1) - 1) / stride) + 1.

    ``padding``: an int, a pair, "valid" (none) or "same" (output size = input size; stride must be 1;
    when the total d*(k-1) is odd the extra row/column goes at the bottom/right, as in PyTorch)."""
    name = "conv2d"
    input, weight, bias = cast_early(Conv2d, input, weight, bias)
    _check_conv_args(name, input, weight, bias, groups)
    stride, dilation = pair(stride, "stride", name), pair(dilation, "dilation", name)
    kernel = tuple(weight.shape[2:])
    pad4 = conv2d_padding(padding, kernel, stride, dilation)
    check_fits(name, input, kernel, dilation, (pad4[0] + pad4[1], pad4[2] + pad4[3]))
    return batched(input, lambda x: Conv2d.apply(
        x, weight, bias, stride=stride, padding=pad4, dilation=dilation, groups=groups))


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
                     padding: IntPair = 0, output_padding: IntPair = 0, groups: int = 1,
                     dilation: IntPair = 1) -> Tensor:
    """The transposed convolution (the gradient of conv2d w.r.t. its input) of (N, C_in, H, W) with weight
    (C_in, C_out/groups, kH, kW) -> (N, C_out, oH, oW), oH = (H-1)*stride - 2*padding
    + dilation*(kH-1) + output_padding + 1."""
    name = "conv_transpose2d"
    input, weight, bias = cast_early(ConvTranspose2d, input, weight, bias)
    _check_conv_args(name, input, weight, bias, groups, transposed=True)
    if isinstance(padding, str):
        raise TypeError(f"{name}: padding must be an int or a pair of ints, got {padding!r}")
    stride, dilation = pair(stride, "stride", name), pair(dilation, "dilation", name)
    padding = pair(padding, "padding", name, minimum=0)
    output_padding = pair(output_padding, "output_padding", name, minimum=0)
    for a, axis in enumerate(("height", "width")):
        if output_padding[a] >= max(stride[a], dilation[a]):
            raise RuntimeError(f"{name}: output_padding must be smaller than either stride or dilation, got "
                               f"output_padding={output_padding}, stride={stride}, dilation={dilation}")
        size = (input.shape[-2 + a] - 1) * stride[a] - 2 * padding[a] \
            + dilation[a] * (weight.shape[2 + a] - 1) + output_padding[a] + 1
        if size < 1:
            raise RuntimeError(f"{name}: the output {axis} would be {size} (input {tuple(input.shape)}, "
                               f"weight {tuple(weight.shape)}, stride={stride}, padding={padding}); it must be "
                               "positive")
    return batched(input, lambda x: ConvTranspose2d.apply(
        x, weight, bias, stride=stride, padding=padding, output_padding=output_padding, dilation=dilation,
        groups=groups))


# ---------------------------------------------------------------------------- shared by conv and pooling
def pair(value: IntPair, what: str, name: str, minimum: int = 1) -> tuple[int, int]:
    """An int or a 1- or 2-sequence of ints as (h, w), each at least ``minimum``."""
    try:
        values = tuple(operator.index(v) for v in value) if isinstance(value, (tuple, list)) \
            else (operator.index(value),)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or a pair of ints, got {value!r}") from None
    if len(values) == 1:
        values = values * 2
    if len(values) != 2:
        raise RuntimeError(f"{name}: {what} must be an int or a pair of ints, got {value!r}")
    if min(values) < minimum:
        raise RuntimeError(f"{name}: {what} must be at least {minimum}, got {value!r}")
    return values[0], values[1]


def check_input(name: str, input: Tensor, integers: bool = False) -> None:
    """A floating-point (or, with ``integers``, integer) Tensor of shape (C, H, W) or (N, C, H, W)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{name}: expected a 3D (unbatched) or 4D (batched) input, got shape "
                           f"{tuple(input.shape)}")
    if not (input.is_floating_point() or (integers and input.dtype.category == 1)):
        kind = "a floating point or integer" if integers else "a floating point"
        raise RuntimeError(f"{name}: expected {kind} input, got {input.dtype}")


def batched(input: Tensor, op: Callable[[Tensor], Any]) -> Any:
    """op on a 4-D (N, C, H, W) input; a 3-D (C, H, W) input runs as a batch of one and the results
    (a tuple too, as max-pool's indices) lose that batch dim again."""
    if input.ndim == 4:
        return op(input)
    out = op(input.unsqueeze(0))
    return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)


def check_fits(name: str, input: Tensor, kernel: Sequence[int], dilation: Sequence[int],
               pad_totals: Sequence[int]) -> None:
    """The dilated kernel must fit in the padded input (else the output would be empty)."""
    padded = tuple(input.shape[-2 + a] + pad_totals[a] for a in range(2))
    span = tuple(dilation[a] * (kernel[a] - 1) + 1 for a in range(2))
    if span[0] > padded[0] or span[1] > padded[1]:
        raise RuntimeError(f"{name}: the kernel {tuple(kernel)} (spanning {span} with dilation "
                           f"{tuple(dilation)}) is larger than the padded input {padded} (input shape "
                           f"{tuple(input.shape)})")


# ---------------------------------------------------------------------------- conv checks
def conv2d_padding(padding: IntPair | str, kernel: Sequence[int], stride: tuple[int, int],
                    dilation: tuple[int, int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a pair, "valid" or "same"."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise RuntimeError(f"conv2d: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
        if stride != (1, 1):
            raise RuntimeError("conv2d: padding='same' is not supported for strided convolutions "
                               f"(stride={stride})")
        totals = [dilation[a] * (kernel[a] - 1) for a in range(2)]
        return (totals[0] // 2, totals[0] - totals[0] // 2, totals[1] // 2, totals[1] - totals[1] // 2)
    ph, pw = pair(padding, "padding", "conv2d", minimum=0)
    return (ph, ph, pw, pw)


def _check_conv_args(name: str, input: Tensor, weight: Tensor, bias: Tensor | None, groups: int,
                     transposed: bool = False) -> None:
    """Types, dims, dtypes, groups, bias shape, and the input's channel count against the weight.
    conv2d weight: (C_out, C_in/groups, kH, kW); transposed: (C_in, C_out/groups, kH, kW)."""
    check_input(name, input)
    if not isinstance(weight, Tensor):
        raise TypeError(f"{name}: weight must be a Tensor, got {type(weight).__name__}")
    if weight.ndim != 4:
        layout = "(in, out/groups, kH, kW)" if transposed else "(out, in/groups, kH, kW)"
        raise RuntimeError(f"{name}: weight must be 4D {layout}, got shape {tuple(weight.shape)}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"{name}: input dtype {input.dtype} and weight dtype {weight.dtype} differ; cast "
                           f"one (e.g. input.to(weight.dtype))")
    if not isinstance(groups, int) or groups < 1:
        raise RuntimeError(f"{name}: groups must be a positive int, got {groups!r}")
    split, c_in, c_out = (("in_channels", weight.shape[0], weight.shape[1] * groups) if transposed else
                          ("out_channels", weight.shape[1] * groups, weight.shape[0]))
    if weight.shape[0] % groups:
        raise RuntimeError(f"{name}: {split} {weight.shape[0]} (weight {tuple(weight.shape)}) is not divisible "
                           f"by groups={groups}")
    channels = input.shape[-3]
    if channels % groups:
        raise RuntimeError(f"{name}: input channels {channels} are not divisible by groups={groups} (input "
                           f"shape {tuple(input.shape)})")
    if channels != c_in:
        raise RuntimeError(f"{name}: expected input with {c_in} channels (weight {tuple(weight.shape)}, "
                           f"groups={groups}), got {channels} (input shape {tuple(input.shape)})")
    if bias is not None:
        if not isinstance(bias, Tensor):
            raise TypeError(f"{name}: bias must be a Tensor or None, got {type(bias).__name__}")
        if tuple(bias.shape) != (c_out,):
            raise RuntimeError(f"{name}: bias must have shape ({c_out},) for {c_out} output channels, got "
                               f"{tuple(bias.shape)}")
        if bias.dtype != input.dtype:
            raise RuntimeError(f"{name}: bias dtype {bias.dtype} differs from the input's {input.dtype}")
