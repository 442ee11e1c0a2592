"""The CPU's layer norm for float32 C-contiguous input: one Numba loop over the rows forward and one backward
(``numba_kernels/normalization.py``). Other dtypes or layouts, or no Numba, run the generic body
(``backends/generic/normalization.py``)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiled import run_kernel
from ..generic.normalization import NormOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)

Array = Any
_F32 = np.dtype(np.float32)


def _kernels(x: Array, *params: Array | None) -> Any:
    """The Numba module for float32 C-contiguous x and float32 parameters (or None), else None."""
    if x.dtype != _F32 or not x.flags.c_contiguous or x.size == 0:
        return None
    if any(p is not None and p.dtype != _F32 for p in params):
        return None
    return numba_kernels.load("normalization")


def _vector(p: Array | None, cols: int, fill: float) -> Array:
    """A (cols,) float32 view of a parameter, or ``fill`` everywhere when it is None."""
    return np.full(cols, fill, dtype=_F32) if p is None else np.ascontiguousarray(p).reshape(cols)


class CpuNormOps(NormOps):
    def layer_norm_forward(self, x: Array, weight: Array | None, bias: Array | None,
                           normalized_ndim: int, eps: float) -> tuple[Array, Array, Array]:
        """As ``NormOps.layer_norm_forward``."""
        k = _kernels(x, weight, bias)
        if k is None:
            return super().layer_norm_forward(x, weight, bias, normalized_ndim, eps)
        cols = math.prod(x.shape[x.ndim - normalized_ndim:])
        rows = x.size // cols
        y = np.empty_like(x)
        mean, invstd = np.empty(rows, dtype=_F32), np.empty(rows, dtype=_F32)
        run_kernel("layer_norm", False, k.layer_norm, x.reshape(rows, cols), _vector(weight, cols, 1.0),
                   _vector(bias, cols, 0.0), float(eps), y.reshape(rows, cols), mean, invstd)
        stats_shape = x.shape[:x.ndim - normalized_ndim] + (1,) * normalized_ndim
        return y, mean.reshape(stats_shape), invstd.reshape(stats_shape)

    def layer_norm_backward(self, gy: Array, x: Array, weight: Array | None, mean: Array,
                            invstd: Array, normalized_ndim: int, needs: tuple[bool, bool, bool]
                            ) -> tuple[Array | None, Array | None, Array | None]:
        """As ``NormOps.layer_norm_backward``."""
        k = _kernels(x, weight, mean, invstd, gy)
        if k is None or gy.shape != x.shape:
            return super().layer_norm_backward(gy, x, weight, mean, invstd, normalized_ndim, needs)
        norm_shape = x.shape[x.ndim - normalized_ndim:]
        cols = math.prod(norm_shape)
        rows = x.size // cols
        gx = np.empty_like(x)
        gw, gb = np.zeros(cols), np.zeros(cols)
        run_kernel("layer_norm_backward", False, k.layer_norm_backward, np.ascontiguousarray(gy).reshape(rows, cols),
                   x.reshape(rows, cols), _vector(weight, cols, 1.0), np.ascontiguousarray(mean).reshape(rows),
                   np.ascontiguousarray(invstd).reshape(rows), gx.reshape(rows, cols), gw, gb)
        return ((gx if needs[0] else None), (gw.astype(_F32).reshape(norm_shape) if needs[1] else None),
                (gb.astype(_F32).reshape(norm_shape) if needs[2] else None))
