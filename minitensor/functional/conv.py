"""Convolutions: ``conv2d`` and ``conv_transpose2d`` (PyTorch's signatures), on the backend's im2col GEMMs.

Shapes: input (N, C_in, H, W) or unbatched (C_in, H, W); conv2d weight (C_out, C_in/groups, kH, kW);
conv_transpose2d weight (C_in, C_out/groups, kH, kW); bias (C_out,).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from ..autograd.function import ArrayFunction
from ..creation import as_tensor
from ..tensor import Tensor
from .shape import pad
from .dtype_match import check_conv
from ..backends.base import Backend
from ..amp.autocast_mode import cast_early

__all__ = ["conv2d", "conv_transpose2d"]
__all__ += ["conv1d", "conv_transpose1d", "conv3d", "conv_transpose3d"]

IntPair = int | Sequence[int]


class Conv2d(ArrayFunction):
    """y[n, o] = b[o] + sum over o's group of channels c and offsets (i, j) of
    w[o, c, i, j] * x_pad[n, c, oh*s_h + i*d_h, ow*s_w + j*d_w]."""
    torch_name = "ConvolutionBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, weight: Any, bias: Any, *, stride: tuple[int, int],
                padding: tuple[int, int, int, int], dilation: tuple[int, int], groups: int) -> Any:
        ctx.params = (stride, padding, dilation, groups)
        ctx.save_for_backward(x, weight)
        return B.conv2d(x, weight, bias, stride, padding, dilation, groups)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, weight = ctx.saved_arrays
        return B.conv2d_backward(gy, x, weight, *ctx.params, needs=tuple(ctx.needs_input_grad))  # type: ignore[misc]


class ConvTranspose2d(ArrayFunction):
    """The adjoint of Conv2d in its input: each input pixel spreads w[c_in, :, i, j] * x over the
    output, at (h*s - p + i*d, w*s - p + j*d)."""
    torch_name = "ConvolutionBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, weight: Any, bias: Any, *, stride: tuple[int, int],
                padding: tuple[int, int], output_padding: tuple[int, int], dilation: tuple[int, int],
                groups: int) -> Any:
        ctx.params = (stride, padding, output_padding, dilation, groups)
        ctx.save_for_backward(x, weight)
        return B.conv_transpose2d(x, weight, bias, stride, padding, output_padding, dilation, groups)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, weight = ctx.saved_arrays
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
    return _conv_transpose2d("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def _conv_transpose2d(name: str, input: Tensor, weight: Tensor, bias: Tensor | None, stride: IntPair,
                      padding: IntPair, output_padding: IntPair, groups: int, dilation: IntPair) -> Tensor:
    """conv_transpose2d, its errors naming ``name`` (conv_transpose1d runs it on a unit height)."""
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


# ------------------------------------------------------------------ 1-D as 2-D, 3-D as 2-D over depth
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
           padding: IntPair | str = 0, dilation: IntPair = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of (N, C_in, L) or (C_in, L) with weight (C_out, C_in/groups, k): conv2d on a
    unit height."""
    _check_conv_args("conv1d", input, weight, bias, groups, dims=1)
    pad = padding if isinstance(padding, str) else (0, single(padding, "padding", "conv1d", 0))
    return conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, single(stride, "stride", "conv1d")), pad,
                  (1, single(dilation, "dilation", "conv1d")), groups).squeeze(-2)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
                     padding: IntPair = 0, output_padding: IntPair = 0, groups: int = 1,
                     dilation: IntPair = 1) -> Tensor:
    """The transposed 1-D convolution of (N, C_in, L) with weight (C_in, C_out/groups, k): conv_transpose2d
    on a unit height."""
    name = "conv_transpose1d"
    _check_conv_args(name, input, weight, bias, groups, transposed=True, dims=1)
    return _conv_transpose2d(name, input.unsqueeze(-2), weight.unsqueeze(-2), bias,
                             (1, single(stride, "stride", name)), (0, single(padding, "padding", name, 0)),
                             (0, single(output_padding, "output_padding", name, 0)), groups,
                             (1, single(dilation, "dilation", name))).squeeze(-2)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """fairseq's time-batch-channel convolution: input (T, B, C_in), weight (K, C_in, C_out), bias (C_out,)
    -> (T + 2 pad - K + 1, B, C_out), y[t, b] = bias + sum_k x_padded[t + k, b] @ weight[k]: conv1d on the
    (B, C_in, T) view with weight (C_out, C_in, K)."""
    if input.dim() != 3:
        raise RuntimeError(f"Input must have 3 dims: time, batch, in_channel, got {input.dim()}D")
    if weight.dim() != 3:
        raise RuntimeError(f"Weight tensor must have 3 dims: kernel_width, in_channels, out_channels, got "
                           f"{weight.dim()}D")
    if bias.dim() != 1:
        raise RuntimeError(f"Bias must be 1-D, got {bias.dim()}D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"Input dim 2 (input channels) is not == dim 1 in the weight tensor: {input.shape[2]} "
                           f"!= {weight.shape[1]}")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError(f"Bias size must equal dim 2 in the weight tensor (output channels): {bias.shape[0]} "
                           f"!= {weight.shape[2]}")
    pad = operator.index(pad)
    length = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                           f"[{length}, {input.shape[1]}, {weight.shape[2]}]")
    if length == 0:  # PyTorch's: an empty output (conv1d refuses a kernel wider than its input); zero gradients
        return input[:0] @ weight[0] + bias
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


__all__ += ["conv_tbc"]


class ScatterAxis(ArrayFunction):
    """out[..., index[i], ...] += y[..., i, ...] along ``axis`` into ``size`` positions (index_select's
    adjoint); the gradient gathers gy back."""

    @staticmethod
    def forward(ctx: Any, B: Backend, y: Any, index: Any, *, axis: int, size: int) -> Any:
        ctx.save_for_backward(index)
        ctx.axis = axis
        out = B.zeros(y.shape[:axis] + (size,) + y.shape[axis + 1:], y.dtype)
        return B.index_add(out, (slice(None),) * axis + (index,), y)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        index, = ctx.saved_arrays
        return B.take(gy, index, ctx.axis), None


def _depth_taps(out_len: int, kernel: int, stride: int, dilation: int, device: Any) -> Tensor:
    """The depth o*stride + k*dilation read by output depth o and kernel depth k, as one (o, k)-ordered list."""
    taps = np.arange(out_len)[:, None] * stride + np.arange(kernel)[None, :] * dilation
    return as_tensor(taps.reshape(-1), device=device)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
           padding: IntPair | str = 0, dilation: IntPair = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation of (N, C_in, D, H, W) with weight (C_out, C_in/groups, kD, kH, kW). The depth
    windows are gathered once into channels, (N oD, C_in kD, H, W), so one conv2d with the weight seen as
    (C_out, C_in/groups kD, kH, kW) does the rest (the kD taps of a channel stay inside its group)."""
    name = "conv3d"
    _check_conv_args(name, input, weight, bias, groups, dims=3)
    stride3, dilation3 = triple(stride, "stride", name), triple(dilation, "dilation", name)
    kernel = tuple(weight.shape[2:])
    pads = conv_padding(name, padding, kernel, stride3, dilation3)
    check_fits(name, input, kernel, dilation3, [lo + hi for lo, hi in pads], dims=3)
    return batched(input, lambda x: _conv3d(x, weight, bias, stride3, pads, dilation3, groups), dims=3)


def _conv3d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...],
            pads: list[tuple[int, int]], dilation: tuple[int, ...], groups: int) -> Tensor:
    n, c, _, h, w = x.shape
    k_d = weight.shape[2]
    if pads[0] != (0, 0):
        x = pad(x, (0, 0, 0, 0, *pads[0]))
    out_d = (x.shape[2] - dilation[0] * (k_d - 1) - 1) // stride[0] + 1
    windows = x.index_select(2, _depth_taps(out_d, k_d, stride[0], dilation[0], x.device))
    windows = windows.reshape(n, c, out_d, k_d, h, w).permute(0, 2, 1, 3, 4, 5).reshape(n * out_d, c * k_d, h, w)
    # only 'same' pads unevenly (stride 1), and conv2d's 'same' splits (H, W) the same way
    hw_padding = (pads[1][0], pads[2][0]) if all(lo == hi for lo, hi in pads[1:]) else "same"
    y = conv2d(windows, weight.reshape(weight.shape[0], -1, *weight.shape[3:]), bias, stride[1:], hw_padding,
               dilation[1:], groups)
    return y.reshape(n, out_d, *y.shape[1:]).permute(0, 2, 1, 3, 4)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntPair = 1,
                     padding: IntPair = 0, output_padding: IntPair = 0, groups: int = 1,
                     dilation: IntPair = 1) -> Tensor:
    """The transposed 3-D convolution of (N, C_in, D, H, W) with weight (C_in, C_out/groups, kD, kH, kW):
    conv_transpose2d of every depth slice into C_out kD channels, each kernel depth then added at depth
    d*stride + k*dilation - padding."""
    name = "conv_transpose3d"
    _check_conv_args(name, input, weight, bias, groups, transposed=True, dims=3)
    stride3, dilation3 = triple(stride, "stride", name), triple(dilation, "dilation", name)
    padding3, out_pad = triple(padding, "padding", name, 0), triple(output_padding, "output_padding", name, 0)
    if out_pad[0] >= max(stride3[0], dilation3[0]):
        raise RuntimeError(f"{name}: output_padding must be smaller than either stride or dilation, got "
                           f"output_padding={out_pad}, stride={stride3}, dilation={dilation3}")
    return batched(input, lambda x: _conv_transpose3d(x, weight, bias, stride3, padding3, out_pad, groups,
                                                      dilation3), dims=3)


def _conv_transpose3d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple[int, ...],
                      padding: tuple[int, ...], output_padding: tuple[int, ...], groups: int,
                      dilation: tuple[int, ...]) -> Tensor:
    n, c, d, h, w = x.shape
    k_d = weight.shape[2]
    slices = x.permute(0, 2, 1, 3, 4).reshape(n * d, c, h, w)
    y = conv_transpose2d(slices, weight.reshape(c, -1, *weight.shape[3:]), None, stride[1:], padding[1:],
                         output_padding[1:], groups, dilation[1:])
    c_out = y.shape[1] // k_d
    y = y.reshape(n, d, c_out, k_d, *y.shape[2:]).permute(0, 1, 3, 2, 4, 5).reshape(n, d * k_d, c_out,
                                                                                       *y.shape[2:])
    full = (d - 1) * stride[0] + dilation[0] * (k_d - 1) + 1 + output_padding[0]
    out_d = full - 2 * padding[0]
    if out_d < 1:
        raise RuntimeError(f"conv_transpose3d: the output depth would be {out_d} (input {tuple(x.shape)}, weight "
                           f"{tuple(weight.shape)}); it must be positive")
    out = ScatterAxis.apply(y, _depth_taps(d, k_d, stride[0], dilation[0], x.device), axis=1, size=full)
    out = out[:, padding[0]:padding[0] + out_d].permute(0, 2, 1, 3, 4)
    return out if bias is None else out + bias.reshape(-1, 1, 1, 1)


# ---------------------------------------------------------------------------- shared by conv and pooling
def ntuple(value: IntPair, what: str, name: str, n: int, minimum: int = 1) -> tuple[int, ...]:
    """An int or a 1- or n-sequence of ints as n ints, each at least ``minimum``."""
    kind = "a pair of ints" if n == 2 else f"a tuple of {n} ints"
    try:
        values = tuple(operator.index(v) for v in value) if isinstance(value, (tuple, list)) \
            else (operator.index(value),)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or {kind}, got {value!r}") from None
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise RuntimeError(f"{name}: {what} must be an int or {kind}, got {value!r}")
    if min(values) < minimum:
        raise RuntimeError(f"{name}: {what} must be at least {minimum}, got {value!r}")
    return values


def pair(value: IntPair, what: str, name: str, minimum: int = 1) -> tuple[int, int]:
    """An int or a 1- or 2-sequence of ints as (h, w), each at least ``minimum``."""
    h, w = ntuple(value, what, name, 2, minimum)
    return h, w


def single(value: IntPair, what: str, name: str, minimum: int = 1) -> int:
    return ntuple(value, what, name, 1, minimum)[0]


def triple(value: IntPair, what: str, name: str, minimum: int = 1) -> tuple[int, ...]:
    return ntuple(value, what, name, 3, minimum)


def check_input(name: str, input: Tensor, integers: bool = False, dims: int = 2) -> None:
    """A floating-point (or, with ``integers``, integer) Tensor of shape (C, *spatial) or (N, C, *spatial)
    with ``dims`` spatial dims."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}: expected a {dims + 1}D (unbatched) or {dims + 2}D (batched) input, got "
                           f"shape {tuple(input.shape)}")
    if not (input.is_floating_point() or (integers and input.dtype.category == 1)):
        kind = "a floating point or integer" if integers else "a floating point"
        raise RuntimeError(f"{name}: expected {kind} input, got {input.dtype}")


def batched(input: Tensor, op: Callable[[Tensor], Any], dims: int = 2) -> Any:
    """op on a batched (N, C, *spatial) input with ``dims`` spatial dims; an unbatched (C, *spatial) input runs
    as a batch of one and the results (a tuple too, as max-pool's indices) lose that batch dim again."""
    if input.ndim == dims + 2:
        return op(input)
    out = op(input.unsqueeze(0))
    return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)


def check_fits(name: str, input: Tensor, kernel: Sequence[int], dilation: Sequence[int],
               pad_totals: Sequence[int], dims: int = 2) -> None:
    """The dilated kernel must fit in the padded input (else the output would be empty)."""
    padded = tuple(input.shape[-dims + a] + pad_totals[a] for a in range(dims))
    span = tuple(dilation[a] * (kernel[a] - 1) + 1 for a in range(dims))
    if any(sp > pd for sp, pd in zip(span, padded)):
        raise RuntimeError(f"{name}: the kernel {tuple(kernel)} (spanning {span} with dilation "
                           f"{tuple(dilation)}) is larger than the padded input {padded} (input shape "
                           f"{tuple(input.shape)})")


# ---------------------------------------------------------------------------- conv checks
def conv2d_padding(padding: IntPair | str, kernel: Sequence[int], stride: tuple[int, int],
                    dilation: tuple[int, int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a pair, "valid" or "same"."""
    (top, bottom), (left, right) = conv_padding("conv2d", padding, kernel, stride, dilation)
    return (top, bottom, left, right)


def conv_padding(name: str, padding: IntPair | str, kernel: Sequence[int], stride: Sequence[int],
                 dilation: Sequence[int]) -> list[tuple[int, int]]:
    """(before, after) per spatial dim from an int, a tuple, "valid" or "same" (the odd pixel after)."""
    dims = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * dims
        if padding != "same":
            kind = "pair" if dims == 2 else "tuple"
            raise RuntimeError(f"{name}: padding must be an int, a {kind}, 'valid' or 'same', got {padding!r}")
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{name}: padding='same' is not supported for strided convolutions "
                               f"(stride={tuple(stride)})")
        totals = [dilation[a] * (kernel[a] - 1) for a in range(dims)]
        return [(t // 2, t - t // 2) for t in totals]
    return [(p, p) for p in ntuple(padding, "padding", name, dims, minimum=0)]


def _check_conv_args(name: str, input: Tensor, weight: Tensor, bias: Tensor | None, groups: int,
                     transposed: bool = False, dims: int = 2) -> None:
    """Types, dims, dtypes, groups, bias shape, and the input's channel count against the weight.
    conv weight: (C_out, C_in/groups, *kernel); transposed: (C_in, C_out/groups, *kernel)."""
    check_input(name, input, dims=dims)
    if not isinstance(weight, Tensor):
        raise TypeError(f"{name}: weight must be a Tensor, got {type(weight).__name__}")
    if weight.ndim != dims + 2:
        layout = "(in, out/groups, *kernel)" if transposed else "(out, in/groups, *kernel)"
        raise RuntimeError(f"{name}: weight must be {dims + 2}D {layout}, got shape {tuple(weight.shape)}")
    check_conv(input, weight, bias if isinstance(bias, Tensor) else None)
    if not isinstance(groups, int) or groups < 1:
        raise RuntimeError(f"{name}: groups must be a positive int, got {groups!r}")
    split, c_in, c_out = (("in_channels", weight.shape[0], weight.shape[1] * groups) if transposed else
                          ("out_channels", weight.shape[1] * groups, weight.shape[0]))
    if weight.shape[0] % groups:
        raise RuntimeError(f"{name}: {split} {weight.shape[0]} (weight {tuple(weight.shape)}) is not divisible "
                           f"by groups={groups}")
    channels = input.shape[-dims - 1]
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
