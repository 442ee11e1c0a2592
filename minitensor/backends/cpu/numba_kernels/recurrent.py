"""The LSTM cell's pointwise step, forward and backward, as one float32 loop each (the CPU's ``recurrent.py``
calls them once per time step, around the step's GEMM; the maths is in ``backends/generic/recurrent.py``).

tanh is Eigen's rational approximation (``generic_fast_tanh_float``: odd degree-13 over even degree-6
polynomials on x clamped to +-7.905, where tanh rounds to +-1 in float32), within 6 ulp of tanh, and sigmoid
is (1 + tanh(x / 2)) / 2 as in the generic body. It has no branch and no libm call, so LLVM vectorises the
loop: Numba has no vector tanh here (no SVML), and libm's scalar one took 17 ns an element, 100x this.
Constants are float32 so that the arithmetic stays float32.
"""
from __future__ import annotations

import functools

import numba
import numpy as np

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False)

_f = np.float32
A1, A3, A5, A7 = _f(4.89352455891786e-03), _f(6.37261928875436e-04), _f(1.48572235717979e-05), \
    _f(5.12229709037114e-08)
A9, A11, A13 = _f(-8.60467152213735e-11), _f(2.00018790482477e-13), _f(-2.76076847742355e-16)
B0, B2, B4, B6 = _f(4.89352518554385e-03), _f(2.26843463243900e-03), _f(1.18534705686654e-04), \
    _f(1.19825839466702e-06)
CLAMP, HALF, ONE = _f(7.90531110763549805), _f(0.5), _f(1.0)


@jit
def tanh(x):  # pragma: no cover - compiled
    x = min(max(x, -CLAMP), CLAMP)  # NaN stays NaN
    x2 = x * x
    p = ((((((A13 * x2 + A11) * x2 + A9) * x2 + A7) * x2 + A5) * x2 + A3) * x2 + A1) * x
    return p / (((B6 * x2 + B4) * x2 + B2) * x2 + B0)


@jit
def sigmoid(x):  # pragma: no cover - compiled
    return HALF + HALF * tanh(HALF * x)


@jit
def tanh_flat(x, y):  # pragma: no cover - compiled
    """y = tanh(x) on flat arrays (for the tests of the approximation)."""
    for k in range(x.size):
        y[k] = tanh(x[k])


@jit
def lstm_cell(gi, hw, c_prev, act, c, h):  # pragma: no cover - compiled
    """z = gi + hw (N, 4H); act = (sigmoid, sigmoid, tanh, sigmoid) of z's quarters; c = f c_prev + i g;
    h = o tanh(c). 2-D C-contiguous float32 arrays. Short loops over a row with few arrays each: LLVM
    vectorises those (one loop over all six arrays stayed scalar: too many possible overlaps to check)."""
    hidden = c.shape[1]
    for r in range(c.shape[0]):
        z, a = gi[r], act[r]
        w = hw[r]
        for j in range(2 * hidden):
            a[j] = sigmoid(z[j] + w[j])
        for j in range(2 * hidden, 3 * hidden):
            a[j] = tanh(z[j] + w[j])
        for j in range(3 * hidden, 4 * hidden):
            a[j] = sigmoid(z[j] + w[j])
        cp, cr, hr = c_prev[r], c[r], h[r]
        for j in range(hidden):
            cc = a[hidden + j] * cp[j] + a[j] * a[2 * hidden + j]
            cr[j] = cc
            hr[j] = a[3 * hidden + j] * tanh(cc)


@jit
def lstm_cell_backward(gy, dh_rec, dc, act, c_prev, c, dz):  # pragma: no cover - compiled
    """dh = gy + dh_rec; dz (N, 4H) as in the generic body; dc (N, H) is dc_t on entry, dc_{t-1} on exit.
    Three short loops per row (see lstm_cell); dz's o quarter holds dh between the first two."""
    hidden = c.shape[1]
    for r in range(c.shape[0]):
        g_r, d_r, z_r = gy[r], dh_rec[r], dz[r]
        for j in range(hidden):
            z_r[3 * hidden + j] = g_r[j] + d_r[j]
        a, c_r, dc_r = act[r], c[r], dc[r]
        for j in range(hidden):
            dh = z_r[3 * hidden + j]
            tc = tanh(c_r[j])
            o = a[3 * hidden + j]
            dc_r[j] += dh * o * (ONE - tc * tc)
            z_r[3 * hidden + j] = dh * tc * o * (ONE - o)
        cp = c_prev[r]
        for j in range(hidden):
            d = dc_r[j]
            i, f, g = a[j], a[hidden + j], a[2 * hidden + j]
            z_r[j] = d * g * i * (ONE - i)
            z_r[hidden + j] = d * cp[j] * f * (ONE - f)
            z_r[2 * hidden + j] = d * i * (ONE - g * g)
            dc_r[j] = d * f
