"""Max pooling and its backward as Numba kernels over channels-last arrays (the layout notes are in
``conv.py``); the CPU's ``pooling.py`` calls them.

Geometry arguments, as in ``generic/conv.py``: output position (oh, ow) with kernel offset (i, j) reads input
row oh*sh - ph + i*dh and column ow*sw - pw + j*dw; positions outside the input are skipped (padding).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def max_pool2d(x, y, indices, kh, kw, sh, sw, ph, pw, dh, dw):  # pragma: no cover - compiled
    """y = each window's max, indices = its flat position h*W + w in the input plane (int64), PyTorch's
    rule: scan the window's cells inside the input row by row, take a cell greater than the running max
    or NaN (so ties keep the first, a NaN wins, the last NaN if several); a window with no cell inside
    the input gets -inf and index -1. x (N, H, W, C); y, indices (N, oH, oW, C), overwritten."""
    n_img, out_h, out_w, channels = y.shape
    height, width = x.shape[1], x.shape[2]
    for n in range(n_img):
        for oh in range(out_h):
            for ow in range(out_w):
                for c in range(channels):
                    y[n, oh, ow, c] = -np.inf
                    indices[n, oh, ow, c] = -1
                first = True
                for i in range(kh):
                    h = oh * sh - ph + i * dh
                    if h < 0 or h >= height:
                        continue
                    for j in range(kw):
                        w = ow * sw - pw + j * dw
                        if w < 0 or w >= width:
                            continue
                        position = h * width + w
                        for c in range(channels):
                            v = x[n, h, w, c]
                            if first or v > y[n, oh, ow, c] or np.isnan(v):
                                y[n, oh, ow, c] = v
                                indices[n, oh, ow, c] = position
                        first = False


@njit(cache=True, nogil=True)
def max_pool2d_backward(gy, indices, gx):  # pragma: no cover - compiled
    """gx[n, p, c] = sum of gy[n, oh, ow, c] over the windows whose index is p (overlapping windows add
    up; index -1 is skipped). gy, indices (N, oH, oW, C); gx (N, H*W, C), overwritten."""
    n_img, out_h, out_w, channels = gy.shape
    for n in range(n_img):
        gx[n] = 0
        for oh in range(out_h):
            for ow in range(out_w):
                for c in range(channels):
                    p = indices[n, oh, ow, c]
                    if p >= 0:
                        gx[n, p, c] += gy[n, oh, ow, c]
