"""The CPU's LSTM recurrence for float32: per time step one BLAS GEMM written into a reused buffer and one
Numba pass for the cell (``numba_kernels/recurrent.py``) instead of the generic body's dozen NumPy passes and
temporaries. Other dtypes, or no Numba, run the generic body (``backends/generic/recurrent.py``).

The batch's rows are independent through the recurrence, so they are cut into one part per BLAS thread
(``parallel.over_parts``), each running all the steps on its own thread with single-threaded GEMMs; the parts
meet once per direction. A step's GEMM (N x H by H x 4H, N = 16, H = 256: 8 MFLOP, tens of µs) split over the
BLAS's two threads synchronised them at every step, twice as often as the steps: on a busy machine a thread
that lost its core held the other one waiting each time (the forward of one layer took 7-110 ms at 2 threads
against a steady 8 ms at 1, docs/performance.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import run_kernel
from ..generic.recurrent import RecurrentOps
from .parallel import blas_threads, over_parts
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)

Array = Any
_F32 = np.dtype(np.float32)
MIN_PART_ROWS = 4  # a part of fewer rows makes GEMMs too thin to pay for the hand-over to a thread


def _kernels(*arrays: Array) -> Any:
    """The Numba module when every array is float32, else None (the generic body serves)."""
    if any(a.dtype != _F32 for a in arrays):
        return None
    return numba_kernels.load("recurrent")


def _row_parts(batch: int) -> list[tuple[slice]]:
    """The batch's rows cut into one slice per BLAS thread, none under MIN_PART_ROWS rows (one slice at least)."""
    parts = max(min(blas_threads(), batch // MIN_PART_ROWS), 1)
    bounds = [batch * i // parts for i in range(parts + 1)]
    return [(slice(bounds[i], bounds[i + 1]),) for i in range(parts)]


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
        w_t = w_hh.T  # a transposed view: BLAS reads it as such, no copy

        def part(rows: slice) -> None:
            hw = np.empty((rows.stop - rows.start, gates), dtype=_F32)
            h, c = np.ascontiguousarray(h0[rows]), np.ascontiguousarray(c0[rows])
            for t in range(steps):  # each step's slices [t, rows] are C-contiguous (N, .) blocks
                np.matmul(h, w_t, out=hw)
                run_kernel("lstm_cell", False, k.lstm_cell, gi[t, rows], hw, c, acts[t, rows], cs[t, rows],
                           y[t, rows])
                h, c = y[t, rows], cs[t, rows]

        over_parts(part, _row_parts(batch))
        y[steps] = cs[steps - 1] if steps else c0
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

        def part(rows: slice) -> None:
            dh_r, dc_r = dh[rows], dc[rows]  # C-contiguous row blocks, written in place
            for t in range(steps - 1, -1, -1):
                run_kernel("lstm_cell_backward", False, k.lstm_cell_backward, gy[t, rows], dh_r, dc_r,
                           acts[t, rows], cs[t - 1, rows] if t else c0[rows], cs[t, rows], dgi[t, rows])
                np.matmul(dgi[t, rows], w_hh, out=dh_r)

        over_parts(part, _row_parts(h0.shape[0]))
        gates, hidden = w_hh.shape
        dw_hh = dgi[0].T @ h0  # the sum over steps of dz_t^T h_{t-1}: h_0, then y's h_1 .. h_{L-1} in one GEMM
        if steps > 1:
            dw_hh += dgi[1:].reshape(-1, gates).T @ y[:steps - 1].reshape(-1, hidden)
        return dgi, dh, dc, dw_hh
