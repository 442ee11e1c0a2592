"""``unfold`` and ``fold`` (PyTorch's ``F.unfold`` / ``F.fold``): sliding local blocks, on the conv family's
im2col and col2im hooks (so each device's kernels serve them too).

    unfold  (N, C, H, W) -> (N, C*kH*kW, L), L = oH*oW:
            out[n, (c, i, j), (oh, ow)] = x_pad[n, c, oh*s_h + i*d_h, ow*s_w + j*d_w]
    fold    its adjoint, (N, C*kH*kW, L) -> (N, C, H, W) with (H, W) = ``output_size``: every column value is
            added at the position unfold read it from (overlapping blocks sum; padding is dropped)

with oH = floor((H + 2 p_h - d_h (kH - 1) - 1) / s_h) + 1. Each one's gradient is the other. Unbatched
inputs ((C, H, W) for unfold, (C*kH*kW, L) for fold) run as a batch of one.
"""
from __future__ import annotations

from typing import Any

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from .conv import IntPair, batched, pair

__all__ = ["unfold", "fold"]

Pair = tuple[int, int]


def _im2col(B: Backend, x: Any, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out_hw: Pair) -> Any:
    """x (N, C, H, W) -> the blocks (N, C*kH*kW, L), contiguous as PyTorch's."""
    pad4 = (padding[0], padding[0], padding[1], padding[1])
    cols = B.im2col(x, kernel, stride, pad4, dilation, out_hw, 1)  # (1, C*kH*kW, N, L)
    return B.ascontiguous(cols[0].transpose(1, 0, 2))


def _col2im(B: Backend, cols: Any, x_shape: tuple[int, ...], kernel: Pair, stride: Pair, padding: Pair,
            dilation: Pair, out_hw: Pair) -> Any:
    """The blocks (N, C*kH*kW, L) summed into (N, C, H, W): col2im without a weight, on their rows."""
    rows = cols.transpose(0, 2, 1).reshape(-1, cols.shape[1])  # (N*L, C*kH*kW)
    pad4 = (padding[0], padding[0], padding[1], padding[1])
    return B.col2im(rows, out_hw, None, x_shape, stride, pad4, dilation, 1, kernel)


class Im2Col(ArrayFunction):
    """unfold: the sliding blocks of x as columns; the gradient sums them back (col2im)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
                out_hw: Pair) -> Any:
        ctx.params = (tuple(x.shape), kernel, stride, padding, dilation, out_hw)
        return _im2col(B, x, kernel, stride, padding, dilation, out_hw)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return _col2im(B, gy, *ctx.params)


class Col2Im(ArrayFunction):
    """fold: columns summed into place; the gradient reads the blocks back out (im2col)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, cols: Any, *, x_shape: tuple[int, ...], kernel: Pair, stride: Pair,
                padding: Pair, dilation: Pair, out_hw: Pair) -> Any:
        ctx.params = (kernel, stride, padding, dilation, out_hw)
        return _col2im(B, cols, x_shape, kernel, stride, padding, dilation, out_hw)

    @staticmethod
    def backward(ctx: Any, B: Backend, gx: Any) -> Any:
        return _im2col(B, gx, *ctx.params)


def _blocks(size: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Pair:
    """The number of block positions (oH, oW) along each axis (below 1 when the kernel does not fit)."""
    h, w = ((size[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1 for a in range(2))
    return h, w


def _params(name: str, kernel_size: IntPair, dilation: IntPair, padding: IntPair, stride: IntPair
            ) -> tuple[Pair, Pair, Pair, Pair]:
    """(kernel, dilation, padding, stride) as pairs, with PyTorch's checks and messages."""
    kernel, dil, pad, step = (pair(v, what, name, minimum=-2**62) for v, what in (
        (kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    for (h, w), what, word in ((kernel, "kernel size", "kernel"), (step, "stride", "stride"),
                               (dil, "dilation", "dilation")):
        if h <= 0 or w <= 0:
            raise RuntimeError(f"{what} should be greater than zero, but got {word}_height: {h} {word}_width: {w}")
    if min(pad) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {pad[0]} pad_width: {pad[1]}")
    return kernel, dil, pad, step


def _check_dtype(name: str, input: Tensor) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.is_floating_point():
        raise NotImplementedError(f'"{name}" not implemented for \'{input.dtype}\'')


def unfold(input: Tensor, kernel_size: IntPair, dilation: IntPair = 1, padding: IntPair = 0,
           stride: IntPair = 1) -> Tensor:
    """The sliding kH x kW blocks of (N, C, H, W) (or (C, H, W)) as columns (N, C*kH*kW, L)."""
    _check_dtype("im2col", input)
    kernel, dil, pad, step = _params("unfold", kernel_size, dilation, padding, stride)
    if input.dim() not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    out_hw = _blocks((input.shape[-2], input.shape[-1]), kernel, step, pad, dil)
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(input.shape[-2:])}, kernel_size={kernel}, "
                           f"dilation={dil}, padding={pad}, calculated shape of the array of sliding blocks as "
                           f"{out_hw}, but its components must be at least one.")
    return batched(input, lambda x: Im2Col.apply(x, kernel=kernel, stride=step, padding=pad, dilation=dil,
                                                  out_hw=out_hw))


def fold(input: Tensor, output_size: IntPair, kernel_size: IntPair, dilation: IntPair = 1, padding: IntPair = 0,
         stride: IntPair = 1) -> Tensor:
    """Sums the columns (N, C*kH*kW, L) (or (C*kH*kW, L)) of sliding blocks into (N, C, *output_size)."""
    _check_dtype("col2im", input)
    size = pair(output_size, "output_size", "fold")
    kernel, dil, pad, step = _params("fold", kernel_size, dilation, padding, stride)
    if input.dim() not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    blocks = kernel[0] * kernel[1]
    if input.shape[-2] % blocks:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={input.shape[-2]} and kernel_size={kernel}.")
    out_hw = _blocks(size, kernel, step, pad, dil)
    if out_hw[0] * out_hw[1] != input.shape[-1] or min(out_hw) < 1:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dil}, padding={pad}, "
                           f"stride={step}, expected size of input's dimension 2 to match the calculated number "
                           f"of sliding blocks {max(out_hw[0], 0)} * {max(out_hw[1], 0)} = "
                           f"{max(out_hw[0], 0) * max(out_hw[1], 0)}, but got input.size(2)={input.shape[-1]}.")
    return batched(input, lambda cols: Col2Im.apply(
        cols, x_shape=(cols.shape[0], cols.shape[1] // blocks) + size, kernel=kernel, stride=step, padding=pad,
        dilation=dil, out_hw=out_hw), dims=1)
