"""Cross-entropy over class indices, forward and backward, as one float32 pass over each row of the logits
(the CPU's ``loss.py`` calls them; the maths is ``backends/generic/loss.py``'s, without class weights or label
smoothing):

    log p = (x - m) - log sum_j exp(x_j - m),  m = max_j x_j;   loss_n = -log p[n, t_n]
    dx = g_n (p - onehot(t_n))

NumPy's body makes a dozen passes and temporaries over (N, C) logits of a few classes (max, subtract, exp,
sum, log, subtract, the target's gather through an index grid, and again for the backward); here a row is
read once and finished in cache. The exp is ``elementary.exp_nonpositive`` (x - m <= 0; vectorised, within
1 ulp). A NaN or +inf logit makes the row's sum, and so every log-probability of the row, NaN, as NumPy's
body does; an ignored row's loss is 0 whatever its logits (PyTorch skips those rows), and its gradient
0 p: 0, or NaN where p is NaN, as PyTorch's.
"""
from __future__ import annotations

import math

import numpy as np

from .elementary import ZERO, exp_nonpositive, jit, row_sum

NEG_INF = np.float32(-np.inf)


@jit
def cross_entropy_rows(x, target, ignore_index, log_probs, losses, bad):  # pragma: no cover - compiled
    """x (N, C) C-contiguous float32 logits, target (N,) integers; writes log_probs (N, C) and losses (N,).
    bad[0] = -1, or the first row whose target is neither in [0, C) nor ignore_index (that row and the ones
    after it are left unwritten)."""
    rows, classes = x.shape
    bad[0] = -1
    for n in range(rows):
        t = target[n]
        if t != ignore_index and (t < 0 or t >= classes):
            bad[0] = n
            return
        row, out = x[n], log_probs[n]
        m = NEG_INF
        for j in range(classes):
            m = max(m, row[j])  # a NaN is skipped here and makes the row NaN through the sum
        for j in range(classes):
            out[j] = exp_nonpositive(row[j] - m)
        log_sum = np.float32(math.log(row_sum(out, classes)))
        for j in range(classes):
            out[j] = (row[j] - m) - log_sum
        losses[n] = ZERO if t == ignore_index else -out[t]


@jit
def cross_entropy_rows_backward(g, log_probs, target, ignore_index, gx):  # pragma: no cover - compiled
    """gx (N, C) = g_n (exp(log_probs) - onehot(t_n)), g_n = 0 on ignored rows; g (N,) any strides (a broadcast
    scalar for 'mean' and 'sum'). The targets are the forward's, already checked."""
    rows, classes = log_probs.shape
    for n in range(rows):
        t, out, lp = target[n], gx[n], log_probs[n]
        gn = ZERO if t == ignore_index else g[n]
        for j in range(classes):
            out[j] = exp_nonpositive(lp[j]) * gn  # an ignored row: 0, or NaN where p is (as PyTorch)
        if t != ignore_index:
            out[t] -= gn
