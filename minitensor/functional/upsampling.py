"""Resampling: ``interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area) and
``pixel_shuffle`` / ``pixel_unshuffle``. They compose other families and have no backend family of their own.

Every interpolating mode is separable: along each spatial axis output o is a weighted sum of its own few
taps (2 linear, 4 cubic, the window for area), ``AxisStencil``, a gather per axis (the gradient gathers through
the transposed taps). A NaN or inf reaches only the outputs whose stencil holds it, zero-weight taps included,
as PyTorch's kernels (whose taps and weights these are: source index, clamping at the borders, the cubic
convolution with A = -0.75, an axis of unchanged size read as taps (o, o) with weights (1, 0)); nearest modes
gather rows instead (index_select).
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..backends.generic.pooling import adaptive_stencil
from ..creation import as_tensor
from ..dtypes import float64
from ..tensor import Tensor
from .along_axis import IndexSelect
from ._util import named
from .upsampling_antialias import antialias_stencil

__all__ = ["interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle"]

_MODES = {"nearest": None, "nearest-exact": None, "area": None, "linear": 3, "bilinear": 4, "bicubic": 4,
          "trilinear": 5}
_CUBIC_A = -0.75


# ------------------------------------------------------------------------------ the per-axis weights
def _source_scale(in_size: int, out_size: int, align_corners: bool, scale: float | None,
                  opmath: Any = np.float64) -> Any:
    """PyTorch's area_pixel_compute_scale in the kernel's opmath type (float32 for float32 input): input
    pixels per output pixel."""
    if align_corners:
        return opmath(in_size - 1) / opmath(out_size - 1) if out_size > 1 else opmath(0.0)
    return opmath(1.0 / scale) if scale is not None and scale > 0 else opmath(in_size) / opmath(out_size)


def _fma(a: Any, b: Any, c: Any, opmath: Any) -> np.ndarray:
    """a b + c rounded once in ``opmath``, as PyTorch's compiled source index (contracted to an FMA): the
    residue decides whether a source position is whole, so whether a zero weight meets an inf. float32: the
    product is exact in float64; float64: Dekker's exact product and Knuth's two-sum."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    if opmath == np.float32:
        return (a * b + c).astype(np.float32)
    p = a * b
    split = 134217729.0  # 2^27 + 1: halves of 26 bits, whose products are exact
    ah, bh = (split * a) - ((split * a) - a), (split * b) - ((split * b) - b)
    err = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    s = p + c
    back = s - p
    return s + (((p - (s - back)) + (c - back)) + err)


def _taps(in_size: int, out_size: int, align_corners: bool, scale: float | None, cubic: bool,
          opmath: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """(index, t) per output position: the source position's integer part and fraction, computed as PyTorch's
    kernel in ``opmath`` (the integer part through C's floorf, i.e. of the position rounded to float32).
    Linear modes clamp the source at 0 and the index into [0, in) (PyTorch's guard_index_and_lambda); cubic
    keeps both as they are (its taps are clamped when read)."""
    r = _source_scale(in_size, out_size, align_corners, scale, opmath)
    dst = np.arange(out_size, dtype=opmath)
    src = r * dst if align_corners else _fma(r, dst + opmath(0.5), -0.5, opmath)
    if not cubic:
        src = np.maximum(src, opmath(0.0))
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), in_size - 1)
    t = np.clip(src - index, opmath(0.0), opmath(1.0))
    return index, t if cubic else t.astype(np.float64)


def _cubic_weights(t: np.ndarray, opmath: Any = np.float64) -> list[np.ndarray]:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 around the source position, in ``opmath``
    as PyTorch's get_cubic_upsample_coefficients (the far taps at t + 1 and (1 - t) + 1)."""
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    t = t.astype(opmath)
    x2 = opmath(1.0) - t
    return [w.astype(np.float64) for w in (far(t + opmath(1.0)), near(t), near(x2), far(x2 + opmath(1.0)))]


def _stencil(mode: str, in_size: int, out_size: int, align_corners: bool, scale: float | None,
             opmath: Any = np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(index, weight, valid) of one axis, each (out, taps), for the linear, cubic and area modes."""
    if mode == "area":  # adaptive average pooling: rows average [floor(i in / out), ceil((i + 1) in / out))
        return adaptive_stencil(in_size, out_size)
    if mode != "bicubic" and in_size == out_size:  # PyTorch's linear kernels copy: taps (o, o), weights (1, 0)
        rows = np.arange(out_size)
        return np.stack([rows, rows], 1), np.tile([1.0, 0.0], (out_size, 1)), None
    index, t = _taps(in_size, out_size, align_corners, scale, mode == "bicubic", opmath)
    if mode == "bicubic":
        taps = np.clip(index[:, None] + np.arange(-1, 3), 0, in_size - 1)
        return taps, np.stack(_cubic_weights(t, opmath), 1), None
    return np.stack([index, np.minimum(index + 1, in_size - 1)], 1), np.stack([1 - t, t], 1), None


class AxisStencil(ArrayFunction):
    """y[..., o, ...] = sum_k weight[o, k] x[..., index[o, k], ...] along ``axis`` (the backend's
    ``axis_stencil``); the gradient is the same taps read backwards, or gy itself with ``copy_backward``
    (PyTorch's bicubic backward copies when no size changes, though its forward reads every tap)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, axis: int, index: np.ndarray, weight: np.ndarray,
                valid: np.ndarray | None, copy_backward: bool = False) -> Any:
        ctx.stencil, ctx.in_size, ctx.copy_backward = (axis, index, weight, valid), x.shape[axis], copy_backward
        return B.axis_stencil(x, axis, index, weight, valid)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        if ctx.copy_backward:
            return gy
        axis, index, weight, valid = ctx.stencil
        return B.axis_stencil_backward(gy, axis, index, weight, valid, ctx.in_size)


def _nearest_index(mode: str, in_size: int, out_size: int, scale: float | None) -> np.ndarray:
    """Source rows of nearest / nearest-exact, in float32 as PyTorch's kernel computes them."""
    r = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(in_size) / np.float32(out_size)
    dst = np.arange(out_size, dtype=np.float32)
    if mode == "nearest-exact":
        dst += np.float32(0.5)
    return np.minimum(np.floor(dst * r).astype(np.int64), in_size - 1)


# ------------------------------------------------------------------------------------- interpolate
def _spatial_sizes(input: Tensor, size: Any, scale_factor: Any, mode: str, recompute_scale_factor: bool | None
                   ) -> tuple[list[int], list[float | None]]:
    """(output sizes, the scale factors the kernels see: None where they use in / out), as PyTorch."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = _per_dim(input, size, "output", "output size of", "output size in (o1, o2, ...,oK)")
        try:
            return [operator.index(s) for s in sizes], [None] * len(sizes)
        except TypeError:
            raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                            f"int], but got size with types {[type(s) for s in sizes]}") from None
    scales = _per_dim(input, scale_factor, "scale_factor", "scale_factor of shape", "scale_factor in (s1, s2, ...,sK)")
    sizes = [math.floor(n * float(s)) for n, s in zip(input.shape[2:], scales)]
    if recompute_scale_factor or mode == "area":
        return sizes, [None] * len(sizes)
    return sizes, [float(s) for s in scales]


def _per_dim(input: Tensor, value: Any, subject: str, described: str, form: str) -> list[Any]:
    """``value`` for each spatial dim (a number is repeated); a sequence of the wrong length is PyTorch's
    ValueError."""
    dim = input.ndim - 2
    values = list(value) if isinstance(value, (list, tuple)) else [value] * dim
    if len(values) != dim:
        raise ValueError(f"Input and {subject} must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {list(input.shape[2:])} and {described} {value}. Please provide "
                         f"input tensor in (N, C, d1, d2, ...,dK) format and {form} format.")
    return values


def _check_mode(input: Tensor, mode: str, align_corners: bool | None, antialias: bool) -> None:
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  "for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    needs = _MODES[mode]
    if needs is not None and input.ndim != needs:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {needs}D input")
    if align_corners is not None and needs is None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")  # PyTorch's words (minitensor has no lanczos mode)
    from .upsampling_uint8 import check_dtype
    check_dtype(input, mode)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resample (N, C, *spatial) to ``size`` (or floor(spatial * scale_factor)) along every spatial dim.

    Linear modes map output position o to source position (o + 0.5) * in / out - 0.5 (o * (in - 1) /
    (out - 1) with ``align_corners``); a given ``scale_factor`` replaces in / out by 1 / scale_factor
    unless ``recompute_scale_factor``."""
    _check_mode(input, mode, align_corners, antialias)
    sizes, scales = _spatial_sizes(input, size, scale_factor, mode, recompute_scale_factor)
    if min(sizes) < 1:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input {tuple(input.shape[2:])} "
                           f"output {tuple(sizes)}")
    if mode in ("bilinear", "bicubic") and not input.is_floating_point():  # uint8: PyTorch's fixed point
        if antialias:
            raise NotImplementedError("interpolate: antialias=True on uint8 input is not supported (convert to a "
                                      "floating dtype first)")
        from .upsampling_uint8 import interpolate_uint8
        return interpolate_uint8(input, sizes, scales, mode, bool(align_corners))
    opmath = np.float64 if input.dtype == float64 else np.float32  # PyTorch's opmath type
    out = input
    for k, (in_size, out_size, scale) in enumerate(zip(input.shape[2:], sizes, scales)):
        axis = 2 + k
        if mode in ("nearest", "nearest-exact"):
            index = _nearest_index(mode, in_size, out_size, scale)
            if out_size != in_size or not np.array_equal(index, np.arange(in_size)):
                out = IndexSelect.apply(out, as_tensor(index, device=input.device), axis)
            continue
        if antialias:
            index, weight, valid = antialias_stencil(mode, in_size, out_size,
                                                     _source_scale(in_size, out_size, bool(align_corners), scale))
        else:
            index, weight, valid = _stencil(mode, in_size, out_size, bool(align_corners), scale, opmath)
        out = AxisStencil.apply(out, axis=axis, index=index, weight=weight, valid=valid,
                                copy_backward=mode == "bicubic" and tuple(sizes) == tuple(input.shape[2:]))
    if out is input:  # nearest at the same size: nothing resampled
        return out
    # PyTorch's node: UpsampleNearest2DBackward0, UpsampleBilinear2DBackward0, UpsampleNearestExact1DBackward0...
    kind = "NearestExact" if mode == "nearest-exact" else mode.capitalize()
    return named(out, f"Upsample{kind}{input.ndim - 2}D{'Aa' if antialias else ''}Backward0")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The deprecated name of ``interpolate``."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")`` (PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)`` on (N, C, H, W)
    (PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ += ["upsample_nearest", "upsample_bilinear"]


# ------------------------------------------------------------------------------------ pixel shuffle
def _check_shuffle(name: str, input: Tensor, factor: int, what: str) -> None:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           "dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): y[c, h r + i, w r + j] = x[c r^2 + i r + j, h, w]."""
    r = operator.index(upscale_factor)
    _check_shuffle("pixel_shuffle", input, r, "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return named(x.reshape(*batch, c // (r * r), h * r, w * r), "PixelShuffleBackward0")


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle."""
    r = operator.index(downscale_factor)
    _check_shuffle("pixel_unshuffle", input, r, "downscale_factor")
    *batch, c, h, w = input.shape
    for axis, size in (("height", h), ("width", w)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {axis} to be divisible by downscale_factor, but "
                               f"input.size({-2 if axis == 'height' else -1})={size} is not divisible by {r}")
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return named(x.reshape(*batch, c * r * r, h // r, w // r), "PixelUnshuffleBackward0")



__all__ += ["channel_shuffle"]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with its channels as a (groups, C / groups) grid read column by column:
    y[:, k (C / groups) ... ] interleaves the groups (ShuffleNet's shuffle)."""
    g = operator.index(groups)
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")
    return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(input.shape)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """ATen's name of ``channel_shuffle`` (the same shuffle; PyTorch's differs only in being the
    non-quantized kernel)."""
    return channel_shuffle(input, groups)


__all__ += ["native_channel_shuffle"]
