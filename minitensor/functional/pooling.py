"""Pooling (PyTorch's signatures): ``max_pool2d`` (optionally with indices), ``avg_pool2d``,
``adaptive_avg_pool2d`` and ``adaptive_max_pool2d``, over (N, C, H, W) or unbatched (C, H, W) inputs."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from ..autograd.function import ArrayFunction
from ..backends.generic.pooling import pool_out_len
from ..tensor import Tensor
from .conv import IntPair, batched, check_input, ntuple, pair, single, triple
from .along_axis import gather
from ._util import named
from ..backends.base import Backend
from ..dtypes import int64
from ..amp.autocast_mode import cast_early
from ..amp.policy import Pool3d

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]
__all__ += ["max_pool1d", "avg_pool1d", "max_pool3d", "avg_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "adaptive_avg_pool1d", "adaptive_avg_pool3d"]
__all__ += ["adaptive_max_pool1d", "adaptive_max_pool2d"]


class MaxPool2d(ArrayFunction):
    """y = the window's max; with ``return_indices`` also PyTorch's int64 flat positions in each input
    plane. Backward sends gy to the argmax (overlapping windows add up); what it saves is only the argmax's
    offset inside its window, in the narrowest integer dtype (uint8 for windows up to 256 cells)."""
    torch_name = "MaxPool2DWithIndicesBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                padding: tuple[int, int], dilation: tuple[int, int], ceil_mode: bool,
                return_indices: bool = False) -> Any:
        y, offsets = B.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
        ctx.x_shape = x.shape
        ctx.geometry = (kernel_size, stride, padding, dilation)
        ctx.save_for_backward(offsets)
        if not return_indices:
            return y
        return y, B.max_pool2d_indices(offsets, x.shape, *ctx.geometry)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        offsets, = ctx.saved_arrays
        return B.max_pool2d_backward(gy, offsets, ctx.x_shape, *ctx.geometry)


class AvgPool2d(ArrayFunction):
    """y = sum of the window / divisor; backward spreads gy / divisor over the window. Saves nothing."""
    torch_name = "AvgPool2DBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                padding: tuple[int, int], ceil_mode: bool, count_include_pad: bool,
                divisor_override: int | None) -> Any:
        ctx.x_shape = x.shape
        ctx.params = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        return B.avg_pool2d(x, *ctx.params)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.avg_pool2d_backward(gy, ctx.x_shape, *ctx.params)


class AdaptiveAvgPool2d(ArrayFunction):
    """y = A_h x A_w^T with averaging matrices over PyTorch's adaptive windows; gx = A_h^T gy A_w."""
    torch_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, output_size: tuple[int, int]) -> Any:
        ctx.x_shape = x.shape
        return B.adaptive_avg_pool2d(x, output_size)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.adaptive_avg_pool2d_backward(gy, ctx.x_shape)


class AdaptiveMaxPool2d(ArrayFunction):
    """y = the max of each adaptive window, with its int64 flat index in the input plane; backward adds gy
    at the indices (adaptive windows may overlap, and then share a max). Saves the indices."""
    torch_name = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, output_size: tuple[int, int]) -> Any:
        y, indices = B.adaptive_max_pool2d(x, output_size)
        ctx.x_shape = x.shape
        ctx.save_for_backward(indices)
        return y, indices

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        indices, = ctx.saved_arrays
        n, c, h, w = ctx.x_shape
        gx = B.zeros((n, c, h * w), gy.dtype)
        flat = (n, c, gy.shape[2] * gy.shape[3])  # no -1: n or c may be 0
        return B.scatter_add_along_axis(gx, indices.reshape(flat), gy.reshape(flat), 2).reshape(ctx.x_shape)


def max_pool2d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """y[n, c, oh, ow] = max over (i, j) of x_pad[n, c, oh*s + i*d, ow*s + j*d], padding being -inf;
    (N, C, H, W) -> (N, C, oH, oW), oH = floor_or_ceil((H + 2p - d*(k-1) - 1) / s) + 1.

    ``stride`` defaults to ``kernel_size``; ``return_indices=True`` also returns the int64 argmax as a
    flat position in each input H*W plane (PyTorch's indices, for ``max_unpool2d``; -1 for a dilated
    window wholly in the padding, whose output is -inf). Floating point and integer inputs."""
    name = "max_pool2d"
    kernel, stride, padding = _pool_args(name, input, kernel_size, stride, padding, integers=True)
    dilation = pair(dilation, "dilation", name)
    _check_output_size(input, kernel, stride, padding, dilation, ceil_mode)
    return batched(input, lambda x: MaxPool2d.apply(
        x, kernel_size=kernel, stride=stride, padding=padding, dilation=dilation, ceil_mode=bool(ceil_mode),
        return_indices=bool(return_indices)))


def avg_pool2d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """y = (sum of the window of the zero-padded input) / divisor; the divisor is ``divisor_override``,
    else the window's size clipped to the padded input (``count_include_pad``) or to the input itself."""
    name = "avg_pool2d"
    kernel, stride, padding = _pool_args(name, input, kernel_size, stride, padding,
                                         integers=isinstance(input, Tensor) and input.dtype.np == np.int64)
    if divisor_override is not None and operator.index(divisor_override) == 0:
        raise RuntimeError(f"{name}: divisor_override must not be zero")
    _check_output_size(input, kernel, stride, padding, (1, 1), ceil_mode)
    return batched(input, lambda x: AvgPool2d.apply(
        x, kernel_size=kernel, stride=stride, padding=padding, ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad), divisor_override=divisor_override))


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """(N, C, H, W) -> (N, C, oH, oW); output cell i averages rows [floor(i*H/oH), ceil((i+1)*H/oH)) (and
    likewise columns). ``output_size`` is an int or a pair; a None entry keeps the input's size."""
    out = _adaptive_size("adaptive_avg_pool2d", input, output_size)
    y = batched(input, lambda x: AdaptiveAvgPool2d.apply(x, output_size=out))
    return named(y, "MeanBackward1") if out == (1, 1) and input.ndim == 4 else y  # PyTorch's mean over H, W


def adaptive_max_pool2d(input: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
                        ) -> Any:
    """(N, C, H, W) -> (N, C, oH, oW); output cell i is the max over rows [floor(i*H/oH), ceil((i+1)*H/oH))
    (and likewise columns). ``return_indices=True`` also returns each max's int64 flat position in its
    H*W plane (the first max in scan order). A None entry in ``output_size`` keeps the input's size."""
    out = _adaptive_size("adaptive_max_pool2d", input, output_size)
    pooled = batched(input, lambda x: AdaptiveMaxPool2d.apply(x, output_size=out))
    return pooled if return_indices else pooled[0]


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int], return_indices: bool = False) -> Any:
    """(N, C, L) -> (N, C, oL), the max over [floor(i L / oL), ceil((i + 1) L / oL)): adaptive_max_pool2d on
    a unit height; indices are positions along L."""
    name = "adaptive_max_pool1d"
    check_input(name, input, dims=1)
    size = single(output_size, "output_size", name, minimum=0)  # 0: an empty output, as PyTorch
    y, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), True)
    return (y.squeeze(-2), indices.squeeze(-2)) if return_indices else y.squeeze(-2)


def _adaptive_size(name: str, input: Tensor, output_size: int | Sequence[int | None]) -> tuple[int, int]:
    """An adaptive pooling's (oH, oW) from an int or a pair whose None entries keep the input's size."""
    check_input(name, input)
    sizes = (output_size,) * 2 if not isinstance(output_size, (tuple, list)) else tuple(output_size)
    if len(sizes) != 2:
        raise RuntimeError(f"{name}: output_size must be an int or a pair, got {output_size!r}")
    return pair(tuple(input.shape[-2 + a] if s is None else s for a, s in enumerate(sizes)), "output_size", name,
                minimum=0)  # 0: an empty output, as PyTorch


def _pool_args(name: str, input: Tensor, kernel_size: IntPair, stride: IntPair | None, padding: IntPair,
               integers: bool = False) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(kernel, stride, padding) as pairs; stride defaults to the kernel; padding at most half the kernel."""
    check_input(name, input, integers=integers)
    kernel = pair(kernel_size, "kernel_size", name)
    stride = kernel if stride is None or stride == [] or stride == () else pair(stride, "stride", name)
    padding = pair(padding, "padding", name, minimum=0)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise RuntimeError(f"{name}: padding should be at most half of the kernel size, got padding={padding} "
                           f"and kernel_size={kernel}")
    return kernel, stride, padding


def _check_output_size(input: Tensor, kernel: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[int, int], dilation: tuple[int, int], ceil_mode: bool) -> None:
    """PyTorch's rule: every output dim at least 1 (in ceil mode a window may hang past the input)."""
    out = [pool_out_len(input.shape[-2 + a], kernel[a], stride[a], padding[a], dilation[a], bool(ceil_mode))
           for a in range(2)]
    if min(out) < 1:
        planes, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({planes}x{h}x{w}). Calculated output size: "
                           f"({planes}x{out[0]}x{out[1]}). Output size is too small")


# ------------------------------------------------------------------ 1-D as 2-D, 3-D as 2-D twice
def _stride_or_kernel(stride: IntPair | None, kernel: IntPair) -> IntPair:
    return kernel if stride is None or stride == [] or stride == () else stride


def max_pool1d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """max_pool2d of (N, C, L) or (C, L) on a unit height; indices are positions along L."""
    name = "max_pool1d"
    check_input(name, input, integers=True, dims=1)
    k = single(kernel_size, "kernel_size", name)
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, single(_stride_or_kernel(stride, k), "stride", name)),
                     (0, single(padding, "padding", name, 0)), (1, single(dilation, "dilation", name)), ceil_mode,
                     return_indices)
    return tuple(o.squeeze(-2) for o in out) if return_indices else out.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """avg_pool2d of (N, C, L) or (C, L) on a unit height."""
    name = "avg_pool1d"
    check_input(name, input, integers=True, dims=1)
    k = single(kernel_size, "kernel_size", name)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, single(_stride_or_kernel(stride, k), "stride", name)),
                      (0, single(padding, "padding", name, 0)), ceil_mode, count_include_pad).squeeze(-2)


def _pool3d_args(name: str, input: Tensor, kernel_size: IntPair, stride: IntPair | None, padding: IntPair
                 ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    check_input(name, input, integers=True, dims=3)
    kernel = triple(kernel_size, "kernel_size", name)
    return kernel, triple(_stride_or_kernel(stride, kernel), "stride", name), triple(padding, "padding", name, 0)


def _over_depth_then_planes(input: Tensor, depth_pool: Callable[[Tensor], Any],
                            plane_pool: Callable[[Tensor], Any]) -> tuple[Any, Any, Any]:
    """A separable 3-D pooling: ``depth_pool`` on the (D, H*W) planes of (N, C, D, H, W), then ``plane_pool``
    on each resulting (H, W) plane; -> (their two raw results, the (N, C, oD) prefix of the output)."""
    n, c, d, h, w = input.shape
    first = depth_pool(input.reshape(n, c, d, h * w))
    y1 = first[0] if isinstance(first, tuple) else first
    second = plane_pool(y1.reshape(n, c * y1.shape[2], h, w))
    return first, second, (n, c, y1.shape[2])


def max_pool3d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The max over (kD, kH, kW) windows of (N, C, D, H, W), as the max over depth windows followed by the
    max over (kH, kW) windows (max is separable). The gradient goes to one element per window; indices are
    flat positions in each D*H*W volume (ties: the first (h, w), then the first d, where PyTorch takes the
    first (d, h, w))."""
    name = "max_pool3d"
    input, = cast_early(Pool3d, input)  # CPU autocast: float32, as PyTorch's
    k, s, p = _pool3d_args(name, input, kernel_size, stride, padding)
    dil = triple(dilation, "dilation", name)

    def pool(x: Tensor) -> Any:
        first, second, prefix = _over_depth_then_planes(
            x, lambda v: max_pool2d(v, (k[0], 1), (s[0], 1), (p[0], 0), (dil[0], 1), ceil_mode, return_indices),
            lambda v: max_pool2d(v, k[1:], s[1:], p[1:], dil[1:], ceil_mode, return_indices))
        if not return_indices:
            return second.reshape(*prefix, *second.shape[2:])
        (_, i1), (y2, i2) = first, second
        out_hw = y2.shape[2:]
        flat = gather(i1, 3, i2.reshape(*prefix, math.prod(out_hw)))  # no -1: the batch may be empty
        return y2.reshape(*prefix, *out_hw), flat.reshape(*prefix, *out_hw)

    return batched(input, pool, dims=3)


def avg_pool3d(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean over (kD, kH, kW) windows of (N, C, D, H, W): the window sum and PyTorch's divisor (the
    window's extent clipped per dim) both factor over depth and the (H, W) plane, so it is avg_pool2d over
    depth, then over the planes (``divisor_override`` divides once, at the end)."""
    name = "avg_pool3d"
    input, = cast_early(Pool3d, input)
    k, s, p = _pool3d_args(name, input, kernel_size, stride, padding)
    if divisor_override is not None and operator.index(divisor_override) == 0:
        raise RuntimeError(f"{name}: divisor_override must not be zero")

    def pool(x: Tensor) -> Tensor:
        _, y2, prefix = _over_depth_then_planes(
            x, lambda v: avg_pool2d(v, (k[0], 1), (s[0], 1), (p[0], 0), ceil_mode, count_include_pad,
                                    None if divisor_override is None else 1),
            lambda v: avg_pool2d(v, k[1:], s[1:], p[1:], ceil_mode, count_include_pad, divisor_override))
        return y2.reshape(*prefix, *y2.shape[2:])

    return batched(input, pool, dims=3)


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """(N, C, L) -> (N, C, oL), cell i averaging [floor(i L / oL), ceil((i + 1) L / oL)): adaptive_avg_pool2d on a
    unit height."""
    name = "adaptive_avg_pool1d"
    check_input(name, input, dims=1)
    size = single(output_size, "output_size", name, minimum=0)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_avg_pool3d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """(N, C, D, H, W) -> (N, C, oD, oH, oW) with adaptive windows; separable, so adaptive_avg_pool2d over depth
    and then over the planes. A None entry keeps the input's size."""
    name = "adaptive_avg_pool3d"
    input, = cast_early(Pool3d, input)
    check_input(name, input, dims=3)
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * 3
    if len(sizes) != 3:
        raise RuntimeError(f"{name}: output_size must be an int or 3 ints, got {output_size!r}")
    out = triple(tuple(input.shape[-3 + a] if s is None else s for a, s in enumerate(sizes)), "output_size", name,
                 minimum=0)

    def pool(x: Tensor) -> Tensor:
        _, y2, prefix = _over_depth_then_planes(x, lambda v: adaptive_avg_pool2d(v, (out[0], None)),
                                                lambda v: adaptive_avg_pool2d(v, out[1:]))
        return y2.reshape(*prefix, *out[1:])

    return batched(input, pool, dims=3)


class MaxUnpool(ArrayFunction):
    """y (N, C, oH*oW) zero except y[n, c, indices[n, c, i]] = x[n, c, i]; the gradient gathers gy there."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, indices: Any, *, size: int) -> Any:
        n, c = x.shape[:2]
        ctx.save_for_backward(indices)
        out = B.zeros((n, c, size), x.dtype)
        grid = (B.arange(0, n, 1, np.dtype(np.int64)).reshape(n, 1, 1),
                B.arange(0, c, 1, np.dtype(np.int64)).reshape(1, c, 1))
        out[grid + (indices,)] = x  # a set, not an add: overlapping windows pick one element more than once
        return out

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        indices, = ctx.saved_arrays
        return B.take_along_axis(gy, indices, 2), None


def _max_unpool(name: str, dims: int, input: Tensor, indices: Tensor, kernel_size: IntPair,
                stride: IntPair | None, padding: IntPair, output_size: Sequence[int] | None) -> Tensor:
    """max_unpool over ``dims`` spatial dims: values at their flat ``indices`` in each zero output volume."""
    check_input(name, input, integers=True, dims=dims)
    kernel = ntuple(kernel_size, "kernel_size", name, dims)
    stride_n = ntuple(_stride_or_kernel(stride, kernel), "stride", name, dims)
    padding_n = ntuple(padding, "padding", name, dims, minimum=0)
    default = [(input.shape[-dims + a] - 1) * stride_n[a] + kernel[a] - 2 * padding_n[a] for a in range(dims)]
    sizes = default if output_size is None else list(output_size)[-dims:] if len(output_size) == dims + 2 \
        else list(output_size)
    if len(sizes) != dims:
        raise ValueError(f"output_size should be a sequence containing {dims} or {dims + 2} elements, but it has a "
                         f"length of '{len(sizes)}'")
    for a in range(dims):
        if not default[a] - stride_n[a] < sizes[a] < default[a] + stride_n[a]:
            raise ValueError(f'invalid output_size "{tuple(output_size or ())}" (dim {a} must be between '
                             f"{default[a] - stride_n[a]} and {default[a] + stride_n[a]})")
    if not isinstance(indices, Tensor) or indices.dtype != int64:
        got = indices.dtype if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"elements in indices should be type int64 but got: {got}")
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    volume = math.prod(sizes)
    if indices.numel():  # a host read, as PyTorch's check
        for bad in (int(indices.max().item()), int(indices.min().item())):
            if not 0 <= bad < volume:
                shown = "x".join(map(str, sizes + [1] if dims == 1 else sizes))  # PyTorch's 1-D runs as 2-D
                raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size {shown})")
    flat_indices = (indices if indices.ndim == dims + 2 else indices.unsqueeze(0)).flatten(2)
    return batched(input, lambda x: MaxUnpool.apply(x.flatten(2), flat_indices, size=volume).reshape(
        *x.shape[:2], *sizes), dims=dims)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: IntPair, stride: IntPair | None = None,
                 padding: IntPair = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The partial inverse of max_pool1d: (N, C, L) values at their ``indices`` in a zero (N, C, L_out)."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: IntPair, stride: IntPair | None = None,
                 padding: IntPair = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The partial inverse of max_pool2d: (N, C, H, W) values put at their max_pool2d ``indices`` (flat
    positions in each output plane) of an otherwise zero (N, C, oH, oW), oH = (H - 1) s - 2 p + k unless
    ``output_size`` says otherwise (within one stride of that)."""
    input, = cast_early(Pool3d, input)
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: IntPair, stride: IntPair | None = None,
                 padding: IntPair = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """The partial inverse of max_pool3d: (N, C, D, H, W) values at their flat ``indices`` in each volume."""
    input, = cast_early(Pool3d, input)
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)
