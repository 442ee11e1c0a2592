"""col2im as a Numba kernel over channels-last arrays (the CPU's ``conv.py`` calls it).

Every array here and in ``pooling.py`` is indexed (N, H, W, C), so that the innermost loop runs along C,
contiguous in a channels-last array, and compiles to vector instructions. The loops are serial: with
``prange`` over the batch, each call waited for a worker thread to be scheduled (about 3 ms a call on the
busy 2-core machine here, where the whole col2im takes 0.1-0.7 ms).

Geometry arguments, as in ``generic/conv.py``: output position (oh, ow) with kernel offset (i, j) reads input
row oh*sh - ph + i*dh and column ow*sw - pw + j*dw; positions outside the input are skipped (padding).
"""
from __future__ import annotations

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
