"""Max pooling and its backward as Numba kernels over channels-last arrays (the layout notes are in
``conv.py``); the CPU's ``pooling.py`` calls them.

Geometry arguments, as in ``generic/conv.py``: output position (oh, ow) with kernel offset (i, j) reads input
row oh*sh - ph + i*dh and column ow*sw - pw + j*dw; positions outside the input are skipped (padding).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def max_pool2d(x, y, offsets, kh, kw, sh, sw, ph, pw, dh, dw):  # pragma: no cover - compiled
    """y = each window's max, offsets = its scan-order offset i*kW + j inside the window (any integer
    dtype wide enough; uint8 for up to 256 cells), PyTorch's rule: scan the window's cells inside the input
    row by row, take a cell greater than the running max or NaN (so ties keep the first, a NaN wins, the
    last NaN if several); a window with no cell inside the input gets -inf and offset 0 (whose position is
    outside the input). x (N, H, W, C); y, offsets (N, oH, oW, C), overwritten; windows of < 2**31 cells.

    The first cell inside the window is copied, each later one merged with selects, not branches: the
    loop over C vectorises, and random signs cost no mispredicted branch. The running max and argmax live
    in two scratch rows (x's dtype, int32), written to y and offsets once per window: the argmax merged in
    place in a uint8 offsets became a masked load of bytes, which AVX2 lacks, so LLVM split it into a branch
    per byte (15x slower: 4.7 against 0.3 ms on the CNN's first pool)."""
    n_img, out_h, out_w, channels = y.shape
    height, width = x.shape[1], x.shape[2]
    best = np.empty(channels, x.dtype)
    arg = np.empty(channels, np.int32)
    for n in range(n_img):
        for oh in range(out_h):
            for ow in range(out_w):
                first = True
                for i in range(kh):
                    h = oh * sh - ph + i * dh
                    if h < 0 or h >= height:
                        continue
                    for j in range(kw):
                        w = ow * sw - pw + j * dw
                        if w < 0 or w >= width:
                            continue
                        k = i * kw + j
                        cell = x[n, h, w]
                        if first:
                            for c in range(channels):
                                best[c] = cell[c]
                                arg[c] = k
                            first = False
                            continue
                        for c in range(channels):
                            v, b = cell[c], best[c]
                            take = (v > b) | (v != v)
                            best[c] = v if take else b
                            arg[c] = k if take else arg[c]
                if first:
                    best[:] = -np.inf
                    arg[:] = 0
                y_row, offsets_row = y[n, oh, ow], offsets[n, oh, ow]
                for c in range(channels):
                    y_row[c] = best[c]
                    offsets_row[c] = arg[c]


@njit(cache=True, nogil=True, error_model="numpy")
def max_pool2d_backward_disjoint(gy, offsets, gx, kh, kw, sh, sw, ph, pw, dh, dw, clear
                                 ):  # pragma: no cover - compiled
    """max_pool2d_backward for windows that share no cell (stride at least the window's span on both axes):
    every cell inside a window is written once, gy where it is the window's argmax and 0 elsewhere, a
    vectorised select instead of a scatter. ``clear``: zero gx first, for cells outside every window.
    gy, offsets (N, oH, oW, C); gx (N, H, W, C), overwritten."""
    n_img, out_h, out_w, channels = gy.shape
    height, width = gx.shape[1], gx.shape[2]
    for n in range(n_img):
        if clear:
            gx[n] = 0
        for oh in range(out_h):
            for i in range(kh):
                h = oh * sh - ph + i * dh
                if h < 0 or h >= height:
                    continue
                for ow in range(out_w):
                    for j in range(kw):
                        w = ow * sw - pw + j * dw
                        if w < 0 or w >= width:
                            continue
                        k = i * kw + j
                        for c in range(channels):
                            gx[n, h, w, c] = gy[n, oh, ow, c] if offsets[n, oh, ow, c] == k else 0


@njit(cache=True, nogil=True)
def max_pool2d_backward(gy, offsets, gx, width, kh, kw, sh, sw, ph, pw, dh, dw):  # pragma: no cover - compiled
    """gx[n, p, c] = sum of gy[n, oh, ow, c] over the windows whose argmax (offset k = i*kW + j, at row
    oh*sh - ph + i*dh and column ow*sw - pw + j*dw) is input position p = row*W + column; overlapping
    windows add up, an offset outside the input (a window wholly in the padding) is skipped.
    gy, offsets (N, oH, oW, C); gx (N, H*W, C), overwritten."""
    n_img, out_h, out_w, channels = gy.shape
    height = gx.shape[1] // width
    row_of, col_of = np.empty(kh * kw, np.int64), np.empty(kh * kw, np.int64)
    for k in range(kh * kw):  # tables, not k // kw and k % kw per element: integer division is slow
        row_of[k], col_of[k] = (k // kw) * dh, (k % kw) * dw
    delta = row_of * width + col_of  # offset k's flat distance from its window's first cell
    for n in range(n_img):
        gx[n] = 0
        for oh in range(out_h):
            top = oh * sh - ph
            for ow in range(out_w):
                left = ow * sw - pw
                origin = top * width + left
                if top >= 0 and top + row_of[-1] < height and left >= 0 and left + col_of[-1] < width:
                    for c in range(channels):  # the whole window inside the input: no checks
                        gx[n, origin + delta[offsets[n, oh, ow, c]], c] += gy[n, oh, ow, c]
                    continue
                for c in range(channels):
                    k = offsets[n, oh, ow, c]
                    h, w = top + row_of[k], left + col_of[k]
                    if 0 <= h < height and 0 <= w < width:
                        gx[n, h * width + w, c] += gy[n, oh, ow, c]
