"""Layer norm over the last axis of a (rows, C) float32 array, forward and backward, one loop over the rows
each (the CPU's ``normalization.py`` calls them): a row's passes run in L1, where NumPy's body takes five
whole-array passes forward and eight backward, each a call. Statistics and the parameter gradients are summed
in float64; the maths is the generic body's (``backends/generic/normalization.py``)."""
from __future__ import annotations

import functools
import math

import numba
import numpy as np

# reassoc: LLVM may split the row sums into vector lanes (a different order of the same float64 additions)
jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False,
                        fastmath={"reassoc"})


@jit
def layer_norm(x, w, b, eps, y, mean, invstd):  # pragma: no cover - compiled
    """y = (x - mean) invstd w + b per row; mean, invstd (rows,) with the biased variance (two passes)."""
    cols = x.shape[1]
    for r in range(x.shape[0]):
        xr, yr = x[r], y[r]
        s = 0.0
        for j in range(cols):
            s += xr[j]
        m = s / cols
        v = 0.0
        for j in range(cols):
            d = xr[j] - m
            v += d * d
        inv = 1.0 / math.sqrt(v / cols + eps)
        mf, invf = np.float32(m), np.float32(inv)
        mean[r], invstd[r] = mf, invf
        for j in range(cols):
            yr[j] = (xr[j] - mf) * invf * w[j] + b[j]


@jit
def layer_norm_backward(gy, x, w, mean, invstd, gx, gw, gb):  # pragma: no cover - compiled
    """gx = invstd (g - mean(g) - x_hat mean(g x_hat)) per row with g = gy w; gw += sum gy x_hat and
    gb += sum gy over the rows (float64 gw, gb)."""
    cols = x.shape[1]
    for r in range(x.shape[0]):
        xr, gr, gxr = x[r], gy[r], gx[r]
        m, inv = mean[r], invstd[r]
        sg, sgx = 0.0, 0.0
        for j in range(cols):
            xh = (xr[j] - m) * inv
            g = gr[j] * w[j]
            sg += g
            sgx += g * xh
            gw[j] += gr[j] * xh
            gb[j] += gr[j]
        a, c = np.float32(sg / cols), np.float32(sgx / cols)
        for j in range(cols):
            xh = (xr[j] - m) * inv
            gxr[j] = inv * (gr[j] * w[j] - a - xh * c)
