"""The LSTM cell's pointwise step, forward and backward, as one float32 loop each (the CPU's ``recurrent.py``
calls them once per time step, around the step's GEMM; the maths is in ``backends/generic/recurrent.py``).

tanh and sigmoid are ``elementary.py``'s branch-free float32 approximations, which LLVM vectorises.
"""
from __future__ import annotations

from .elementary import ONE, jit, sigmoid, tanh


@jit
def lstm_cell(gi, hw, c_prev, act, c, h):  # pragma: no cover - compiled
    """z = gi + hw (N, 4H); act = (sigmoid, sigmoid, tanh, sigmoid) of z's quarters; c = f c_prev + i g;
    h = o tanh(c). 2-D C-contiguous float32 arrays. Short loops over a row with few arrays each: LLVM
    vectorises those (one loop over all six arrays stayed scalar: too many possible overlaps to check). The g
    and o quarters loop from 0 over their slices: loops from 2H to 3H and 3H to 4H ran at a quarter of the
    speed (the cell took 18.6 us at N = 16, H = 256 with them, 5 with the slices)."""
    hidden = c.shape[1]
    for r in range(c.shape[0]):
        z, a = gi[r], act[r]
        w = hw[r]
        for j in range(2 * hidden):
            a[j] = sigmoid(z[j] + w[j])
        zg, wg, ag = z[2 * hidden:3 * hidden], w[2 * hidden:3 * hidden], a[2 * hidden:3 * hidden]
        for j in range(hidden):
            ag[j] = tanh(zg[j] + wg[j])
        zo, wo, ao = z[3 * hidden:], w[3 * hidden:], a[3 * hidden:]
        for j in range(hidden):
            ao[j] = sigmoid(zo[j] + wo[j])
        cp, cr, hr = c_prev[r], c[r], h[r]
        for j in range(hidden):
            cc = a[hidden + j] * cp[j] + a[j] * a[2 * hidden + j]
            cr[j] = cc
            hr[j] = a[3 * hidden + j] * tanh(cc)


@jit
def lstm_cell_backward(gy, dh_rec, dc, act, c_prev, c, dz):  # pragma: no cover - compiled
    """dh = gy + dh_rec (dh_rec may be a transposed view: the caller's GEMM writes it as (H, N)); dz (N, 4H)
    as in the generic body; dc (N, H) is dc_t on entry, dc_{t-1} on exit. Three short loops per row over
    the quarters' slices (see lstm_cell: 7.7 -> 4.6 us at N = 16, H = 256); dz's o quarter holds dh between
    the first two."""
    hidden = c.shape[1]
    for r in range(c.shape[0]):
        g_r, d_r, z_r = gy[r], dh_rec[r], dz[r]
        zi, zf, zg, zo = z_r[:hidden], z_r[hidden:2 * hidden], z_r[2 * hidden:3 * hidden], z_r[3 * hidden:]
        for j in range(hidden):
            zo[j] = g_r[j] + d_r[j]
        a, c_r, dc_r = act[r], c[r], dc[r]
        ai, af, ag, ao = a[:hidden], a[hidden:2 * hidden], a[2 * hidden:3 * hidden], a[3 * hidden:]
        for j in range(hidden):
            dh = zo[j]
            tc = tanh(c_r[j])
            o = ao[j]
            dc_r[j] += dh * o * (ONE - tc * tc)
            zo[j] = dh * tc * o * (ONE - o)
        cp = c_prev[r]
        for j in range(hidden):
            d = dc_r[j]
            i, f, g = ai[j], af[j], ag[j]
            zi[j] = d * g * i * (ONE - i)
            zf[j] = d * cp[j] * f * (ONE - f)
            zg[j] = d * i * (ONE - g * g)
            dc_r[j] = d * f
