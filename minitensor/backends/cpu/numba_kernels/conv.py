"""col2im and the Winograd F(2x2, 3x3) transforms as Numba kernels over channels-last arrays (the CPU's
``conv.py`` calls them).

Every array here and in ``pooling.py`` is indexed (N, H, W, C), so that the innermost loop runs along C,
contiguous in a channels-last array, and compiles to vector instructions. The loops are serial: with
``prange`` over the batch, each call waited for a worker thread to be scheduled (about 3 ms a call on the
busy 2-core machine here, where the whole col2im takes 0.1-0.7 ms).

Geometry arguments, as in ``generic/conv.py``: output position (oh, ow) with kernel offset (i, j) reads input
row oh*sh - ph + i*dh and column ow*sw - pw + j*dw; positions outside the input are skipped (padding).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def col2im(gcols, gx, sh, sw, ph, pw, dh, dw):  # pragma: no cover - compiled
    """gx[n, h, w, c] = sum of gcols[n, oh, ow, i, j, c] over every (oh, ow, i, j) that reads (h, w):
    the scatter-add that turns the gradient of im2col's columns into the input gradient.
    gcols (N, oH, oW, kH, kW, C); gx (N, H, W, C), overwritten."""
    n_img, out_h, out_w, k_h, k_w, channels = gcols.shape
    height, width = gx.shape[1], gx.shape[2]
    for n in range(n_img):
        gx[n] = 0
        for oh in range(out_h):
            for i in range(k_h):
                h = oh * sh - ph + i * dh
                if h < 0 or h >= height:
                    continue
                for ow in range(out_w):
                    for j in range(k_w):
                        w = ow * sw - pw + j * dw
                        if w < 0 or w >= width:
                            continue
                        for c in range(channels):
                            gx[n, h, w, c] += gcols[n, oh, ow, i, j, c]


# ---------------------------------------------------------------------- Winograd F(2x2, 3x3) transforms
# Lavin & Gray (2016): a 2x2 output tile of a 3x3 stride-1 convolution is A^T [(G w G^T) * (B^T d B)] A for
# the 4x4 input tile d, so the 16 products of each (tile, C_in, C_out) triple become 16 GEMMs of
# (tiles, C_in) @ (C_in, C_out) over the transformed tiles V and weights U: 2.25x fewer multiplies than
# im2col's. B^T, A^T hold only 0 and +-1, so the transforms add and subtract: no rounding beyond the sums'.
# Tiles t run over (n, tile row, tile column); tile (ti, tj) reads input rows 2 ti - top + (0..3) and
# columns 2 tj - left + (0..3), zero outside the input.

@njit(cache=True, nogil=True, inline="always")
def _bt(d0, d1, d2, d3):  # pragma: no cover - compiled
    """B^T d along one axis: B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]."""
    return d0 - d2, d1 + d2, d2 - d1, d1 - d3


@njit(cache=True, nogil=True, inline="always")
def _at(m0, m1, m2, m3):  # pragma: no cover - compiled
    """A^T m along one axis: A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]."""
    return m0 + m1 + m2, m1 - m2 - m3


@njit(cache=True, nogil=True)
def winograd_input(x, v, top, left, tiles_h, tiles_w):  # pragma: no cover - compiled
    """v[4 i + j, t, c] = (B^T d B)[i, j] for the input tile d of tile t, channel c.
    x (N, H, W, C); v (16, N*tiles_h*tiles_w, C), overwritten."""
    n_img, height, width, channels = x.shape
    d = np.empty((4, 4, channels), x.dtype)
    tmp = np.empty((4, 4, channels), x.dtype)
    t = 0
    for n in range(n_img):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                for i in range(4):
                    h = 2 * ti - top + i
                    for j in range(4):
                        w = 2 * tj - left + j
                        if 0 <= h < height and 0 <= w < width:
                            for c in range(channels):
                                d[i, j, c] = x[n, h, w, c]
                        else:
                            for c in range(channels):
                                d[i, j, c] = 0
                for j in range(4):
                    for c in range(channels):
                        tmp[0, j, c], tmp[1, j, c], tmp[2, j, c], tmp[3, j, c] = _bt(d[0, j, c], d[1, j, c],
                                                                                     d[2, j, c], d[3, j, c])
                for i in range(4):
                    for c in range(channels):
                        v[4 * i, t, c], v[4 * i + 1, t, c], v[4 * i + 2, t, c], v[4 * i + 3, t, c] = _bt(
                            tmp[i, 0, c], tmp[i, 1, c], tmp[i, 2, c], tmp[i, 3, c])
                t += 1


@njit(cache=True, nogil=True)
def winograd_output(m, y, bias, tiles_h, tiles_w):  # pragma: no cover - compiled
    """y[n, 2 ti + i, 2 tj + j, o] = (A^T M A)[i, j] + bias[o] for tile t = (n, ti, tj), positions inside y.
    m (16, N*tiles_h*tiles_w, C_out); y (N, oH, oW, C_out), overwritten; bias (C_out,)."""
    n_img, out_h, out_w, channels = y.shape
    tmp = np.empty((2, 4, channels), y.dtype)
    t = 0
    for n in range(n_img):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                for j in range(4):
                    for c in range(channels):
                        tmp[0, j, c], tmp[1, j, c] = _at(m[j, t, c], m[4 + j, t, c], m[8 + j, t, c],
                                                         m[12 + j, t, c])
                for i in range(2):
                    h = 2 * ti + i
                    if h >= out_h:
                        continue
                    w = 2 * tj
                    if w + 1 < out_w:
                        for c in range(channels):
                            y0, y1 = _at(tmp[i, 0, c], tmp[i, 1, c], tmp[i, 2, c], tmp[i, 3, c])
                            y[n, h, w, c] = y0 + bias[c]
                            y[n, h, w + 1, c] = y1 + bias[c]
                    else:
                        for c in range(channels):
                            y[n, h, w, c] = _at(tmp[i, 0, c], tmp[i, 1, c], tmp[i, 2, c], tmp[i, 3, c])[0] + bias[c]
                t += 1


@njit(cache=True, nogil=True)
def winograd_output_adjoint(gy, gm, tiles_h, tiles_w):  # pragma: no cover - compiled
    """gm[4 i + j, t, o] = (A g A^T)[i, j]: the adjoint of ``winograd_output`` (its gradient with respect to
    m), g the 2x2 tile of gy at tile t (zero outside gy). gy (N, oH, oW, C_out); gm (16, T, C_out)."""
    n_img, out_h, out_w, channels = gy.shape
    g = np.empty((2, 2, channels), gy.dtype)
    tmp = np.empty((2, 4, channels), gy.dtype)
    t = 0
    for n in range(n_img):
        for ti in range(tiles_h):
            for tj in range(tiles_w):
                for i in range(2):
                    h = 2 * ti + i
                    for j in range(2):
                        w = 2 * tj + j
                        if h < out_h and w < out_w:
                            for c in range(channels):
                                g[i, j, c] = gy[n, h, w, c]
                        else:
                            for c in range(channels):
                                g[i, j, c] = 0
                for i in range(2):  # along columns: A (4x2) = [[1, 0], [1, 1], [1, -1], [0, -1]]
                    for c in range(channels):
                        g0, g1 = g[i, 0, c], g[i, 1, c]
                        tmp[i, 0, c], tmp[i, 1, c], tmp[i, 2, c], tmp[i, 3, c] = g0, g0 + g1, g0 - g1, -g1
                for j in range(4):  # along rows
                    for c in range(channels):
                        g0, g1 = tmp[0, j, c], tmp[1, j, c]
                        gm[j, t, c], gm[4 + j, t, c], gm[8 + j, t, c], gm[12 + j, t, c] = g0, g0 + g1, g0 - g1, -g1
                t += 1
