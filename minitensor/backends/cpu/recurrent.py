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
        hw, hw_t = np.empty((batch, gates), dtype=_F32), np.empty((gates, batch), dtype=_F32)
        h, c = np.ascontiguousarray(h0), np.ascontiguousarray(c0)
        for t in range(steps):
            # (h W_hh^T)^T = W_hh h^T, the big matrix first: OpenBLAS runs this (4H, H) x (H, N) product 1.4x
            # (Haswell) to 2.8x (SkylakeX) faster than (N, H) x (H, 4H) at N = 16 (docs/performance.md);
            # transposing its 4H x N result back costs less than the cell reading it strided
            np.matmul(w_hh, h.T, out=hw_t)
            np.copyto(hw, hw_t.T)
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
        dh_t = np.zeros(h0.shape[::-1], dtype=_F32)
        dh = dh_t.T  # the kernel reads dh strided: cheaper than a transposing copy there
        dc = gy[steps].copy()  # updated in place, step by step
        w_t = np.ascontiguousarray(w_hh.T)
        for t in range(steps - 1, -1, -1):
            run_kernel("lstm_cell_backward", False, k.lstm_cell_backward, gy[t], dh, dc, acts[t],
                       cs[t - 1] if t else c0, cs[t], dgi[t])
            # (dz W_hh)^T = W_hh^T dz^T, the big matrix first, as in the forward (1.4x to 1.9x faster)
            np.matmul(w_t, dgi[t].T, out=dh_t)
        gates, hidden = w_hh.shape
        dw_hh = dgi[0].T @ h0  # the sum over steps of dz_t^T h_{t-1}: h_0, then y's h_1 .. h_{L-1} in one GEMM
        if steps > 1:
            dw_hh += dgi[1:].reshape(-1, gates).T @ y[:steps - 1].reshape(-1, hidden)
        return dgi, np.ascontiguousarray(dh), dc, dw_hh
