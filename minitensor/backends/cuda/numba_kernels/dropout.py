"""Dropout forward and backward, each one pass over the elements.

The random draw comes from the caller (``uniform``: U[0, 1) float32 from the backend's generator), so that
one generator per device, seeded by ``manual_seed``, decides every mask, and a seed gives the same mask as
the generic ``DropoutOps.dropout`` (which draws the same numbers through ``bernoulli``). Numba's in-kernel
xoroshiro128+ would save that draw (one float32 temporary, one CuPy launch) at the price of a second
generator per device, with a state array sized to the grid to allocate, seed and reseed on
``manual_seed``.

The mask is written as uint8 0/1 into the bytes of a bool array. Products follow ``DropoutOps`` (``x * mask``
then ``* 1/(1-p)``): a kept element becomes ``x * kept_scale``, a dropped one ``x * dropped_scale`` with
``dropped_scale`` a zero of the array's dtype, so that NaN and inf still give NaN as ``x * False`` does (a
literal 0 would be typed int64 and turn the float32 product into float64).
"""
from __future__ import annotations

from numba import cuda


@cuda.jit
def dropout_forward_kernel(x, uniform, keep_prob, kept_scale, dropped_scale, y, mask):
    """mask = uniform < keep_prob ; y = x * (kept_scale if mask else dropped_scale)."""
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        keep = uniform[i] < keep_prob
        mask[i] = keep
        y[i] = x[i] * (kept_scale if keep else dropped_scale)


@cuda.jit
def dropout_backward_kernel(gy, mask, kept_scale, dropped_scale, gx):
    """gx = gy * (kept_scale if mask else dropped_scale): forward's scaling through the saved mask."""
    for i in range(cuda.grid(1), gy.size, cuda.gridsize(1)):
        gx[i] = gy[i] * (kept_scale if mask[i] else dropped_scale)
