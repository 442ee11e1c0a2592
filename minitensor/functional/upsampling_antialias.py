"""``interpolate(..., antialias=True)`` for bilinear and bicubic: a separable filter whose support widens with
the downsampling factor, as PyTorch's ``_upsample_bilinear2d_aa`` / ``_upsample_bicubic2d_aa`` (and PIL's
resampling). Per axis, output position o of scale s (input pixels per output pixel) reads

    center = s (o + 1/2),  support = r max(s, 1)  (r = 1 bilinear, 2 bicubic),
    taps j in [trunc(center - support + 1/2), trunc(center + support + 1/2)) clipped to the input,
    w_j = f((j - center + 1/2) / max(s, 1)) / sum_j f(...)

with f the triangle (bilinear) or Keys' cubic with a = -1/2 (bicubic): the taps and weights are an
``AxisStencil`` of width 2 ceil(support) + 1 at most, so forward and backward are the stencil's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

_RADIUS = {"bilinear": 1.0, "bicubic": 2.0}


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(x), 0.0)


def _cubic(x: np.ndarray) -> np.ndarray:
    a, x = -0.5, np.abs(x)  # PIL's (and PyTorch's antialiased) cubic, not the plain bicubic's a = -0.75
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((x - 5) * x + 8) * x * a - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def antialias_stencil(mode: str, in_size: int, out_size: int, scale: Any
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(index, weight, valid), each (out_size, taps), for one axis; ``scale`` is PyTorch's
    area_pixel_compute_scale (input pixels per output pixel)."""
    s = float(scale)
    support = _RADIUS[mode] * max(s, 1.0)
    center = s * (np.arange(out_size) + 0.5)
    low = np.maximum(np.trunc(center - support + 0.5), 0).astype(np.int64)
    high = np.minimum(np.trunc(center + support + 0.5), in_size).astype(np.int64)
    taps = max(int((high - low).max(initial=1)), 1)
    index = low[:, None] + np.arange(taps)
    valid = index < high[:, None]
    f = _triangle if mode == "bilinear" else _cubic
    weight = np.where(valid, f((index - center[:, None] + 0.5) / max(s, 1.0)), 0.0)
    total = weight.sum(axis=1, keepdims=True)
    weight = np.divide(weight, total, out=np.zeros_like(weight), where=total != 0)
    return np.minimum(index, in_size - 1), weight, valid
