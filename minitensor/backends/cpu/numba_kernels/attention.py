"""Attention's softmax over the keys and its backward as one float32 pass over each row of the scores (the
CPU's ``attention.py`` calls them; the maths is in ``backends/generic/attention.py``).

NumPy's body makes seven passes over the (..., L, S) scores (the causal mask's add, max, subtract, exp, sum,
divide, and the checks for fully masked rows), the max along a 64-long axis alone slower than the exp; here a
row is read once into cache and finished there, and a causal row stops at its last visible key (the rest are
written as zeros). The exp is ``elementary.exp_nonpositive`` (vectorised; x - max <= 0). The sums are
``elementary.row_sum`` (reassociated, so that LLVM vectorises them: a different order of the same additions);
the max stays scalar (four running maxima), which keeps NaN semantics exact. Causal rows of 64 keys: 149 ->
112 us for (48, 64, 64) scores with the slices and the four maxima (Zen 5, one thread).
"""
from __future__ import annotations

import numpy as np

from .elementary import ONE, ZERO, exp_nonpositive, jit, row_sum

NEG_INF = np.float32(-np.inf)


@jit
def _row_max(row, n):  # pragma: no cover - compiled
    """max(row[:n]) in four running maxima: one ran at the latency of its loop-carried max. A NaN in row[0]
    is kept, any other is skipped (Numba's max keeps its first argument's NaN); the row's sum then makes the
    row NaN either way."""
    m0 = m1 = m2 = m3 = NEG_INF
    j = 0
    while j + 4 <= n:
        m0, m1, m2, m3 = max(m0, row[j]), max(m1, row[j + 1]), max(m2, row[j + 2]), max(m3, row[j + 3])
        j += 4
    while j < n:
        m0 = max(m0, row[j])
        j += 1
    return max(max(m0, m1), max(m2, m3))


@jit
def softmax_rows(s, causal):  # pragma: no cover - compiled
    """s (R, L, S) C-contiguous float32, in place: each row's softmax over its keys, key j of query i
    visible when not ``causal`` or j <= i (top-left aligned); hidden keys, and every key of a row whose
    visible scores are all -inf, give 0. The loops run over the visible and hidden slices from 0 (a loop
    from n to S stayed scalar: the zeros alone took a quarter of the causal kernel's time)."""
    rows, queries, keys = s.shape
    for b in range(rows):
        for i in range(queries):
            row = s[b, i]
            n = min(i + 1, keys) if causal else keys
            visible = row[:n]
            m = _row_max(visible, n)
            if m == NEG_INF:
                n = 0
            else:
                for j in range(n):
                    visible[j] = exp_nonpositive(visible[j] - m)
                inv = ONE / row_sum(visible, n)
                for j in range(n):
                    visible[j] *= inv
            hidden = row[n:]
            for j in range(hidden.size):
                hidden[j] = ZERO


@jit
def softmax_rows_backward(gp, p, scratch):  # pragma: no cover - compiled
    """gp (R, L, S) = dL/dP in place -> dL/dS = P (dP - sum_j dP_j P_j) per row (P, C-contiguous float32);
    ``scratch`` a float32 array of at least S elements."""
    rows, queries, keys = p.shape
    for b in range(rows):
        for i in range(queries):
            g, pr = gp[b, i], p[b, i]
            for j in range(keys):
                scratch[j] = g[j] * pr[j]
            dot = row_sum(scratch, keys)
            for j in range(keys):
                g[j] = scratch[j] - pr[j] * dot
