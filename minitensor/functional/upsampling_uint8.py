"""``interpolate`` of uint8 images (bilinear and bicubic), as PyTorch's CPU kernel computes them, and which
dtypes each mode takes.

PyTorch resamples uint8 in fixed point, one axis at a time (the last first; an axis of unchanged size is
skipped): a pass's weights w (out, taps) become int16 ``round(w 2^p)`` with the largest precision p for
which the axis's largest weight still fits, and each output is ``clamp((sum_k W_k x_k + 2^(p-1)) >> p, 0,
255)``, rounded to uint8 after every pass. Bilinear's weights are the triangle filter around the source
position over the in-range taps, normalised to sum 1 (``_compute_indices_min_size_weights_aa``); bicubic's
are the float kernel's (taps clamped at the borders, A = -0.75), the weights of a tap read twice summed.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import upsampling as up

# PyTorch's scalar-type names in its "not implemented for" messages
_TORCH_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool",
                "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}
_KERNELS = {"nearest": "compute_indices_weights_nearest", "nearest-exact": "compute_indices_weights_nearest",
            "linear": "compute_indices_weights_linear", "trilinear": "compute_indices_weights_linear",
            "bilinear": "upsample_bilinear2d_channels_last", "bicubic": "compute_indices_weights_cubic",
            "area": "adaptive_avg_pool2d"}


def check_dtype(input: Tensor, mode: str) -> None:
    """PyTorch's CPU kernels take floating inputs, and uint8 for nearest, nearest-exact, bilinear and bicubic;
    every other dtype is its NotImplementedError."""
    if input.is_floating_point():
        return
    name = str(input.dtype).rsplit(".", 1)[-1]
    if name == "uint8" and mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        return
    raise NotImplementedError(f'"{_KERNELS[mode]}" not implemented for \'{_TORCH_NAMES.get(name, name)}\'')


def _linear_weights(in_size: int, out_size: int, align_corners: bool, scale: float | None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(index, weight), each (out, 2): the triangle filter 1 - |j - src| over the taps j in [0, in) around
    src = center - 1/2, center = r (o + 1/2) (r o + 1/2 with align_corners), normalised to sum 1."""
    r = up._source_scale(in_size, out_size, align_corners, scale)
    delta = 0.5 if align_corners else 0.0
    center = r * (np.arange(out_size) + 0.5 - delta)
    xmin = np.maximum(np.trunc(center - 0.5 + delta), 0).astype(np.int64)  # C's cast truncates toward 0
    xsize = np.clip(np.minimum(np.trunc(center + 1.5 + delta), in_size).astype(np.int64) - xmin, 0, 2)
    taps = np.arange(2)
    w = np.maximum(1 - np.abs(taps + xmin[:, None] - center[:, None] + 0.5 - delta), 0.0)
    w = np.where(taps < xsize[:, None], w, 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1.0), w)
    return np.minimum(xmin[:, None] + taps, in_size - 1), w


def _cubic_weights(in_size: int, out_size: int, align_corners: bool, scale: float | None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(index, weight), each (out, 4): the float kernel's clamped taps, a run of equal taps (at a border)
    holding the run's summed weight on its last tap and 0 on the others."""
    index, weight, _ = up._stencil("bicubic", in_size, out_size, align_corners, scale)
    weight = weight.copy()
    for k in range(1, index.shape[1]):  # over the 4 taps: left to right, as PyTorch adds them
        same = index[:, k] == index[:, k - 1]
        weight[:, k] = np.where(same, weight[:, k - 1] + weight[:, k], weight[:, k])
        weight[:, k - 1] = np.where(same, 0.0, weight[:, k - 1])
    return index, weight


def _fixed_point(weight: np.ndarray) -> tuple[np.ndarray, int]:
    """(int64 weights round(w 2^p), half away from 0, and p): the first p (at most 22) at which max(w) 2^(p+1)
    rounds to 2^15 or more (``_compute_index_ranges_int16_weights``)."""
    top = max(float(weight.max(initial=0.0)), 0.0)
    p = 0
    while p < 22 and int(0.5 + top * (1 << (p + 1))) < (1 << 15):
        p += 1
    v = weight * (1 << p)
    return np.trunc(v + np.where(v < 0, -0.5, 0.5)).astype(np.int64), p


def interpolate_uint8(input: Tensor, sizes: list[int], scales: list[float | None], mode: str,
                      align_corners: bool) -> Tensor:
    """(N, C, H, W) uint8 -> (N, C, *sizes) uint8 in PyTorch's fixed point (module docstring)."""
    from .. import int64, uint8

    out = input
    for k in reversed(range(len(sizes))):  # the last axis first, as PyTorch's separable kernel
        in_size, axis = input.shape[2 + k], 2 + k
        if sizes[k] == in_size:
            continue
        weights = _linear_weights if mode == "bilinear" else _cubic_weights
        index, weight = weights(in_size, sizes[k], align_corners, scales[k])
        fixed, p = _fixed_point(weight)
        acc = up.AxisStencil.apply(out.to(int64), axis=axis, index=index, weight=fixed, valid=None)
        out = ((acc + (1 << p >> 1)) // (1 << p)).clamp(0, 255).to(uint8)  # floor: C's >> of a negative sum
    return out if out is not input else input.clone()
