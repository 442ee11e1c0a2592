"""The CPU's LSTM recurrence for float32: per time step one BLAS GEMM written into a reused buffer and one
Numba pass for the cell (``numba_kernels/recurrent.py``) instead of the generic body's dozen NumPy passes and
temporaries. Other dtypes, or no Numba, run the generic body (``backends/generic/recurrent.py``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import run_kernel
from ..generic.recurrent import RecurrentOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)

Array = Any
_F32 = np.dtype(np.float32)


def _kernels(*arrays: Array) -> Any:
    """The Numba module when every array is float32, else None (the generic body serves)."""
    if any(a.dtype != _F32 for a in arrays):
        return None
    return numba_kernels.load("recurrent")


class CpuRecurrentOps(RecurrentOps):
    def lstm_forward(self, gi: Array, h0: Array, c0: Array, w_hh: Array) -> tuple[Array, Array, Array]:
        """As ``RecurrentOps.lstm_forward``."""
        k = _kernels(gi, h0, c0, w_hh)
        if k is None:
            return super().lstm_forward(gi, h0, c0, w_hh)
        gi = np.ascontiguousarray(gi)
        steps, batch, gates = gi.shape
        y = np.empty((steps + 1, batch, gates // 4), dtype=_F32)
        cs, acts = np.empty((steps, batch, gates // 4), dtype=_F32), np.empty_like(gi)
        hw = np.empty((batch, gates), dtype=_F32)
        h, c = np.ascontiguousarray(h0), np.ascontiguousarray(c0)
        w_t = w_hh.T  # a transposed view: BLAS reads it as such, no copy
        for t in range(steps):
            np.matmul(h, w_t, out=hw)
            run_kernel("lstm_cell", False, k.lstm_cell, gi[t], hw, c, acts[t], cs[t], y[t])
            h, c = y[t], cs[t]
        y[steps] = c
        return y, cs, acts

    def lstm_backward(self, gy: Array, h0: Array, c0: Array, w_hh: Array, y: Array, cs: Array, acts: Array
                      ) -> tuple[Array, Array, Array, Array]:
        """As ``RecurrentOps.lstm_backward``."""
        k = _kernels(gy, h0, c0, w_hh, y, cs, acts)
        if k is None:
            return super().lstm_backward(gy, h0, c0, w_hh, y, cs, acts)
        gy, c0 = np.ascontiguousarray(gy), np.ascontiguousarray(c0)
        steps = cs.shape[0]
        dgi = np.empty_like(acts)
        dh = np.zeros(h0.shape, dtype=_F32)
        dc = gy[steps].copy()  # updated in place, step by step
        for t in range(steps - 1, -1, -1):
            run_kernel("lstm_cell_backward", False, k.lstm_cell_backward, gy[t], dh, dc, acts[t],
                       cs[t - 1] if t else c0, cs[t], dgi[t])
            np.matmul(dgi[t], w_hh, out=dh)
        gates, hidden = w_hh.shape
        dw_hh = dgi[0].T @ h0  # the sum over steps of dz_t^T h_{t-1}: h_0, then y's h_1 .. h_{L-1} in one GEMM
        if steps > 1:
            dw_hh += dgi[1:].reshape(-1, gates).T @ y[:steps - 1].reshape(-1, hidden)
        return dgi, dh, dc, dw_hh
