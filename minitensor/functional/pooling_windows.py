"""The windowed max poolings (PyTorch's signatures): ``adaptive_max_pool3d``, ``fractional_max_pool2d`` and
``fractional_max_pool3d``, over batched or unbatched inputs, and the ``*_with_indices`` forms of every max
pooling (they always return (values, indices)). The backend's ``pooling_windows`` computes each window's
max and its flat index in the input plane / volume; the gradient goes back to those indices."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..amp.autocast_mode import cast_early
from ..amp.policy import Pool3d
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import rand
from ..tensor import Tensor
from .conv import IntPair, batched, check_input, ntuple
from .pooling import adaptive_max_pool1d, adaptive_max_pool2d, max_pool1d, max_pool2d, max_pool3d

__all__ = ["adaptive_max_pool3d", "fractional_max_pool2d", "fractional_max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


class _MaxAtIndices(ArrayFunction):
    """Backward of a max pooling that saved its int64 flat indices: gx.flat[indices] += gy per plane (windows
    may overlap and share a max; the repeats add up)."""

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        indices, = ctx.saved_arrays
        n, c = ctx.x_shape[:2]
        gx = B.zeros((n, c, math.prod(ctx.x_shape[2:])), gy.dtype)
        flat = (n, c, math.prod(gy.shape[2:]))  # no -1: n or c may be 0
        return B.scatter_add_along_axis(gx, indices.reshape(flat), gy.reshape(flat), 2).reshape(ctx.x_shape)


class AdaptiveMaxPool3d(_MaxAtIndices):
    """y = the max of each adaptive (D, H, W) window, with its int64 flat index in the input volume."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, output_size: tuple[int, int, int]) -> Any:
        y, indices = B.adaptive_max_pool3d(x, output_size)
        ctx.x_shape = x.shape
        ctx.save_for_backward(indices)
        return y, indices


class FractionalMaxPool2d(_MaxAtIndices):
    """y = the max of each kH x kW window at PyTorch's pseudo-random starts, with its flat index."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, samples: Any, *, kernel_size: tuple[int, ...],
                output_size: tuple[int, ...]) -> Any:
        y, indices = B.fractional_max_pool2d(x, kernel_size, output_size, samples)
        ctx.x_shape = x.shape
        ctx.save_for_backward(indices)
        return y, indices

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return _MaxAtIndices.backward(ctx, B, gy), None


class FractionalMaxPool3d(FractionalMaxPool2d):
    """y = the max of each kD x kH x kW window at PyTorch's pseudo-random starts, with its flat index."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, samples: Any, *, kernel_size: tuple[int, ...],
                output_size: tuple[int, ...]) -> Any:
        y, indices = B.fractional_max_pool3d(x, kernel_size, output_size, samples)
        ctx.x_shape = x.shape
        ctx.save_for_backward(indices)
        return y, indices


def _check_nonempty(name: str, input: Tensor, dims: int) -> None:
    """PyTorch's rule for these poolings: only the batch dim may be empty."""
    first = input.ndim - dims - 1
    for d in range(first, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {d} being empty")


def adaptive_max_pool3d(input: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
                        ) -> Any:
    """(N, C, D, H, W) -> (N, C, oD, oH, oW); output cell (i, j, k) is the max over the adaptive window
    [floor(i*D/oD), ceil((i+1)*D/oD)) x (likewise H) x (likewise W). ``return_indices=True`` also returns
    each max's int64 flat position (d*H + h)*W + w in its volume (the first max in scan order; the last
    NaN). A None entry in ``output_size`` keeps the input's size."""
    name = "adaptive_max_pool3d"
    input, = cast_early(Pool3d, input)  # on the CPU's autocast float32 list, as PyTorch's
    check_input(name, input, dims=3)
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * 3
    if len(sizes) != 3:
        raise RuntimeError(f"{name}: output_size must be an int or 3 ints, got {output_size!r}")
    out = ntuple(tuple(input.shape[-3 + a] if s is None else s for a, s in enumerate(sizes)), "output_size", name,
                 3, minimum=0)
    _check_nonempty(name, input, 3)
    pooled = batched(input, lambda x: AdaptiveMaxPool3d.apply(x, output_size=out), dims=3)
    return pooled if return_indices else pooled[0]


def fractional_max_pool2d(input: Tensor, kernel_size: IntPair, output_size: IntPair | None = None,
                          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """(N, C, H, W) -> (N, C, oH, oW): the max over kH x kW windows whose starts along each axis are
    int((i + u) * alpha) - int(u * alpha), alpha = (H - kH) / (oH - 1), the last at H - kH (Graham's
    fractional max pooling, PyTorch's intervals); u from ``_random_samples`` (N, C, 2) (u[..., 0] for the
    columns, u[..., 1] for the rows), drawn U[0, 1) from minitensor's generator when not given.
    ``output_ratio`` r gives oH = int(H * r). ``return_indices`` also returns flat positions h*W + w."""
    pooled = _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                         _random_samples)
    return pooled if return_indices else pooled[0]


def fractional_max_pool3d(input: Tensor, kernel_size: IntPair, output_size: IntPair | None = None,
                          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """(N, C, D, H, W) -> (N, C, oD, oH, oW): ``fractional_max_pool2d`` over volumes, u from
    ``_random_samples`` (N, C, 3) for depth, rows and columns; indices are (d*H + h)*W + w."""
    pooled = _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                         _random_samples)
    return pooled if return_indices else pooled[0]


def _fractional(name: str, dims: int, input: Tensor, kernel_size: IntPair, output_size: IntPair | None,
                output_ratio: float | Sequence[float] | None, samples: Tensor | None) -> tuple[Tensor, Tensor]:
    """The checks of PyTorch's fractional_max_pool{dims}d in its order, then the pooling."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    input, = cast_early(Pool3d, input)  # both are on the CPU's autocast float32 list
    check_input(name, input, dims=dims)
    if output_size is None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * dims
        if dims == 2 and len(ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        if len(ratio) == 1:
            ratio = ratio * dims
        if len(ratio) != dims:
            raise ValueError(f"{name}: output_ratio must be a number or {dims} numbers, got {output_ratio!r}")
        output_size = tuple(int(input.shape[-dims + a] * float(r)) for a, r in enumerate(ratio))  # type: ignore[arg-type]
    # PyTorch accepts kernel_size < 1 (its windows are then empty); refused here, see docs/differences.md
    kernel = ntuple(kernel_size, "kernel_size", name, dims)
    out = ntuple(output_size, "output_size", name, dims, minimum=0)
    _check_nonempty(name, input, dims)
    planes = input.shape[-dims - 1]
    batch = 1 if input.ndim == dims + 1 else input.shape[0]
    _check_fits(name, dims, input.shape[-dims:], kernel, out)
    if samples is None:
        samples = rand(batch, planes, dims, dtype=input.dtype, device=input.device)
    _check_samples(samples, input, dims, batch, planes)
    cls = FractionalMaxPool2d if dims == 2 else FractionalMaxPool3d
    return batched(input, lambda x: cls.apply(x, samples, kernel_size=kernel, output_size=out), dims=dims)


def _check_fits(name: str, dims: int, spatial: Sequence[int], kernel: Sequence[int], out: Sequence[int]) -> None:
    """out + k - 1 must not pass the input: PyTorch's 2-D check allows equality, its 3-D check does not, and
    its 3-D kernel checks depth, width, height in that order."""
    axes = [(0, "height"), (1, "width")] if dims == 2 else [(0, "time"), (2, "width"), (1, "height")]
    prefix = "fractional_max_pool2d()" if dims == 2 else "fractional_max_pool3d_out()"
    for a, word in axes:
        limit = spatial[a] if dims == 2 else spatial[a] - 1
        if out[a] + kernel[a] - 1 > limit:
            raise RuntimeError(f"{prefix}: pool {word} {kernel[a]} too large relative to input {word} {spatial[a]}")


def _check_samples(samples: Tensor, input: Tensor, dims: int, batch: int, planes: int) -> None:
    if not isinstance(samples, Tensor):
        raise TypeError(f"_random_samples must be a Tensor, got {type(samples).__name__}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.device != input.device:
        raise RuntimeError(f"Expect _random_samples on the input's device {input.device}, got {samples.device}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {samples.shape[2]}.")


# ------------------------------------------------------------------ PyTorch's *_with_indices names
def max_pool1d_with_indices(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
                            dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """``max_pool1d`` returning (values, indices) whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
                            dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """``max_pool2d`` returning (values, indices) whatever ``return_indices`` says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: IntPair, stride: IntPair | None = None, padding: IntPair = 0,
                            dilation: IntPair = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """``max_pool3d`` returning (values, indices) whatever ``return_indices`` says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool1d`` returning (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool2d`` returning (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """``adaptive_max_pool3d`` returning (values, indices)."""
    return adaptive_max_pool3d(input, output_size, True)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: IntPair, output_size: IntPair | None = None,
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """``fractional_max_pool2d`` returning (values, indices)."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: IntPair, output_size: IntPair | None = None,
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:
    """``fractional_max_pool3d`` returning (values, indices)."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)
