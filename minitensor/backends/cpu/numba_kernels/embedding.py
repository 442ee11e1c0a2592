"""The embedding gradient's scatter on the CPU: each row of the incoming gradient added into the row of
the weight's gradient its index names, in input order (``cpu/embedding.py`` calls it)."""
from __future__ import annotations

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False)


@jit
def add_rows(gw, indices, gy):
    """gw[indices[i], :] += gy[i, :] for each i in order: gw (V, D), indices (N,) in [0, V), gy (N, D)."""
    dim = gy.shape[1]
    for i in range(indices.size):
        row = indices[i]
        for j in range(dim):
            gw[row, j] += gy[i, j]
