"""The LSTM recurrence of one layer and direction over a whole sequence, forward and backward, as two methods:
one GEMM and one pointwise cell update per time step, with no graph node per step (``functional/recurrent.py``
makes them one Function). The input projection of every step is the caller's single GEMM.

Shapes: gi (L, N, 4H) = x_t W_ih^T + b_ih + b_hh for every step t; h0, c0 (N, H); w_hh (4H, H). Per step:

    z = gi[t] + h_{t-1} W_hh^T;  i, f, g, o = sigmoid(z_i), sigmoid(z_f), tanh(z_g), sigmoid(z_o)
    c_t = f c_{t-1} + i g;       h_t = o tanh(c_t)

Backward, from dh_t (the output's gradient plus the recurrence's) and dc_t (from step t + 1):

    dc = dc_t + dh_t o (1 - tanh(c_t)^2);  dc_{t-1} = dc f
    dz = (dc g i (1 - i), dc c_{t-1} f (1 - f), dc i (1 - g^2), dh_t tanh(c_t) o (1 - o))
    dh_{t-1} += dz W_hh;  dW_hh = sum_t dz_t^T h_{t-1} (one GEMM over all steps);  dgi = dz
"""
from __future__ import annotations

from typing import Any

Array = Any


def cell_forward(xp: Any, z: Array, c_prev: Array) -> tuple[Array, Array, Array]:
    """One step's gates from the pre-activations z (N, 4H): (activated gates (N, 4H), c (N, H), h (N, H))."""
    hidden = z.shape[-1] // 4
    act = xp.tanh(z * 0.5)  # sigmoid(z) = (1 + tanh(z / 2)) / 2, which cannot overflow
    act += 1
    act *= 0.5
    act[:, 2 * hidden:3 * hidden] = xp.tanh(z[:, 2 * hidden:3 * hidden])
    i, f, g, o = (act[:, k * hidden:(k + 1) * hidden] for k in range(4))
    c = f * c_prev + i * g
    return act, c, o * xp.tanh(c)


def cell_backward(xp: Any, dh: Array, dc: Array, act: Array, c_prev: Array, c: Array) -> tuple[Array, Array]:
    """One step backward: (dz (N, 4H), dc_{t-1} (N, H)) from dh_t, dc_t (the next step's) and the saved
    activated gates and cells."""
    hidden = c.shape[-1]
    i, f, g, o = (act[:, k * hidden:(k + 1) * hidden] for k in range(4))
    tc = xp.tanh(c)
    dc = dc + dh * o * (1 - tc * tc)
    dz = xp.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                         dh * tc * o * (1 - o)], axis=-1)
    return dz, dc * f


class RecurrentOps:
    xp: Any
    matmul: Any  # LinalgOps'

    def lstm_forward(self, gi: Array, h0: Array, c0: Array, w_hh: Array) -> tuple[Array, Array, Array]:
        """The LSTM over the sequence (see the module): (y (L + 1, N, H): h_1 .. h_L then c_L; the cells
        c_1 .. c_L (L, N, H); the activated gates (L, N, 4H)), the last two for ``lstm_backward``."""
        xp = self.xp
        steps, batch, gates = gi.shape
        y = xp.empty((steps + 1, batch, gates // 4), dtype=gi.dtype)
        cs = xp.empty((steps, batch, gates // 4), dtype=gi.dtype)
        acts = xp.empty(gi.shape, dtype=gi.dtype)
        h, c = h0, c0
        w_t = w_hh.T
        for t in range(steps):
            acts[t], cs[t], y[t] = cell_forward(xp, gi[t] + self.matmul(h, w_t), c)
            h, c = y[t], cs[t]
        y[steps] = c
        return y, cs, acts

    def lstm_backward(self, gy: Array, h0: Array, c0: Array, w_hh: Array, y: Array, cs: Array, acts: Array
                      ) -> tuple[Array, Array, Array, Array]:
        """The gradients (dgi (L, N, 4H), dh0, dc0 (N, H), dW_hh (4H, H)) from gy (L + 1, N, H), the gradient
        of ``lstm_forward``'s y, and what it returned."""
        xp = self.xp
        steps = cs.shape[0]
        dgi = xp.empty(acts.shape, dtype=acts.dtype)
        dh = xp.zeros(h0.shape, dtype=h0.dtype)
        dc = gy[steps]
        for t in range(steps - 1, -1, -1):
            dgi[t], dc = cell_backward(xp, gy[t] + dh, dc, acts[t], cs[t - 1] if t else c0, cs[t])
            dh = self.matmul(dgi[t], w_hh)
        h_prev = xp.concatenate([h0[None], y[:steps - 1]]).reshape(-1, h0.shape[-1])
        dw_hh = self.matmul(dgi.reshape(-1, dgi.shape[-1]).T, h_prev)
        return dgi, dh, dc, dw_hh
