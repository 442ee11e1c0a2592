"""The connectionist temporal classification loss (Graves et al. 2006), forward and backward, in log space.

Shapes: log_probs (T, N, C); targets (N, S) padded (only the first target_lengths[n] count); input_lengths
and target_lengths (N,) integers. The extended label sequence of sample n is l' = (blank, l_1, blank, l_2,
..., l_S, blank), L = 2S + 1 positions, of which the first 2 target_lengths[n] + 1 are in use. With
y_t(s) = log_probs[t, n, l'_s]:

    alpha_0(0) = y_0(0),  alpha_0(1) = y_0(1),  alpha_0(s > 1) = -inf
    alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s - 1), alpha_{t-1}(s - 2) if l'_s != l'_{s-2}) + y_t(s)
    nll = -logaddexp(alpha_{T_n - 1}(2 S_n), alpha_{T_n - 1}(2 S_n - 1))

Each time step is one vectorised update of the whole batch and every position (a Python loop over time only).
The backward runs the mirrored recursion for beta'_t(s), the log-probability of finishing from position s at t
excluding y_t(s) (Graves' beta without its emission, so alpha + beta' needs no subtraction of -inf), and
gives PyTorch's gradient with respect to log_probs:

    grad[t, n, c] = g_n (exp(lp[t, n, c]) - sum_{s: l'_s = c} exp(alpha_t(s) + beta'_t(s) + nll))

for t < input_lengths[n], 0 after. The exp(lp) term is PyTorch's: it is the gradient through a log_softmax
in front (which removes it again), not that of the loss itself, and the result is PyTorch's for any input.
"""
from __future__ import annotations

from typing import Any

import numpy as np

Array = Any


class CTCOps:
    xp: Any

    def _ctc_extended(self, log_probs: Array, targets: Array, target_lengths: Array,
                      blank: int) -> tuple[Array, Array, Array]:
        """-> (y (T, N, L): log_probs at each extended label, -inf on the positions past 2 S_n;
        skip (N, L): whether alpha_t(s) may come from alpha_{t-1}(s - 2), i.e. l'_s is a label that differs
        from the previous one; the extended labels l' (N, L), blank on the unused positions)."""
        xp = self.xp
        steps, batch, _ = log_probs.shape
        width = 2 * targets.shape[1] + 1
        position = xp.arange(width)
        used = position[None, :] < 2 * target_lengths[:, None] + 1  # (N, L)
        labels = xp.full((batch, width), blank, dtype=np.int64)
        labels[:, 1::2] = targets
        labels = xp.where(used, labels, blank)  # the padding past S_n may hold anything, -1 included
        y = xp.take_along_axis(log_probs, xp.broadcast_to(labels[None], (steps, batch, width)), axis=2)
        y = xp.where(used[None], y, -np.inf)
        skip = xp.zeros((batch, width), dtype=bool)
        skip[:, 3::2] = targets[:, 1:] != targets[:, :-1]
        return y, skip, labels

    def _logsumexp3(self, a: Array, b: Array, c: Array) -> Array:
        """log(e^a + e^b + e^c) elementwise, PyTorch's way: the max taken out, and 0 for it where all are
        -inf (so -inf stays -inf rather than becoming nan)."""
        xp = self.xp
        m = xp.maximum(xp.maximum(a, b), c)
        m = xp.where(m == -np.inf, 0, m)
        return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m

    def ctc_loss(self, log_probs: Array, targets: Array, input_lengths: Array, target_lengths: Array,
                 blank: int) -> tuple[Array, Array]:
        """-> (nll (N,), log_alpha (T, N, L)): the negative log-likelihood of each target (inf where no
        alignment fits in input_lengths[n] steps; 0 for an empty target on no steps) and the forward
        variables, kept for the backward."""
        xp = self.xp
        steps, batch, _ = log_probs.shape
        y, skip, _ = self._ctc_extended(log_probs, targets, target_lengths, blank)
        width = y.shape[2]
        # two -inf columns in front: alpha_{t-1}(s - 1) and (s - 2) are views, no concatenation per step
        alpha = xp.full((steps, batch, width + 2), -np.inf, dtype=log_probs.dtype)
        alpha[0, :, 2:4] = y[0, :, :2]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            for t in range(1, steps):
                prev = alpha[t - 1]
                alpha[t, :, 2:] = self._logsumexp3(prev[:, 2:], prev[:, 1:-1],
                                                   xp.where(skip, prev[:, :-2], -np.inf)) + y[t]
        alpha = alpha[:, :, 2:]
        rows = xp.arange(batch)
        last = xp.maximum(input_lengths - 1, 0)
        end = alpha[last, rows, 2 * target_lengths]
        before = xp.where(target_lengths > 0, alpha[last, rows, xp.maximum(2 * target_lengths - 1, 0)], -np.inf)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            m = xp.maximum(end, before)
            m = xp.where(m == -np.inf, 0, m)
            log_likelihood = xp.log(xp.exp(end - m) + xp.exp(before - m)) + m
        # no steps: the empty target has probability 1, any other 0 (PyTorch's -0. and inf)
        log_likelihood = xp.where(input_lengths == 0, xp.where(target_lengths == 0, 0.0, -np.inf),
                                  log_likelihood)
        return -log_likelihood.astype(log_probs.dtype, copy=False), alpha

    def ctc_loss_backward(self, g: Array, log_probs: Array, targets: Array, input_lengths: Array,
                          target_lengths: Array, nll: Array, log_alpha: Array, blank: int,
                          zero_infinity: bool) -> Array:
        """(T, N, C) gradient with respect to log_probs from g (N,), that of each sample's loss (see the
        module). An infinite nll gives nan for t < input_lengths[n] (as PyTorch), or 0 with zero_infinity;
        an infinite log-probability gives nan at its own element (PyTorch's res + nll - lp)."""
        xp = self.xp
        steps, batch, classes = log_probs.shape
        y, skip, labels = self._ctc_extended(log_probs, targets, target_lengths, blank)
        width = y.shape[2]
        skip_back = xp.zeros_like(skip)
        skip_back[:, :-2] = skip[:, 2:]  # beta'_t(s) takes from s + 2 where l'_{s+2} != l'_s
        ends = xp.arange(width)[None, :]
        ends = (ends == 2 * target_lengths[:, None]) | ((ends == 2 * target_lengths[:, None] - 1)
                                                          & (target_lengths[:, None] > 0))
        start = xp.where(ends, 0.0, -np.inf).astype(log_probs.dtype)  # beta'_{T_n - 1}
        # beta'_t + y_t, with two -inf columns behind for the (s + 1) and (s + 2) views
        beta_y = xp.full((batch, width + 2), -np.inf, dtype=log_probs.dtype)
        beta = xp.full((steps, batch, width), -np.inf, dtype=log_probs.dtype)
        last = (input_lengths - 1)[:, None]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            for t in range(steps - 1, -1, -1):
                b = self._logsumexp3(beta_y[:, :-2], beta_y[:, 1:-1], xp.where(skip_back, beta_y[:, 2:], -np.inf))
                b = xp.where(t == last, start, xp.where(t < last, b, -np.inf))
                beta[t] = b
                beta_y[:, :-2] = b + y[t]
            # log of each position's share of the likelihood (times exp(-nll)), then summed per class: one
            # batched matmul with the one-hot labels, each (t, n) scaled by its max so that the sum cannot
            # underflow where a class's own log-probability is very negative
            occupancy = log_alpha + beta
            m = occupancy.max(axis=2, keepdims=True)
            m = xp.where(m == -np.inf, 0, m)
            onehot = (labels[:, :, None] == xp.arange(classes)).astype(log_probs.dtype)  # (N, L, C)
            collected = xp.matmul(xp.exp(occupancy - m).transpose(1, 0, 2), onehot).transpose(1, 0, 2)
            with np.errstate(divide="ignore"):
                log_share = xp.log(collected) + m + nll[None, :, None]
            # (lp - lp): nan where lp is infinite, as PyTorch's exp(res + nll - lp) is there
            grad = xp.exp(log_probs) - xp.exp(log_share + (log_probs - log_probs))
        grad *= g[None, :, None]
        kept = xp.arange(steps)[:, None] < input_lengths[None, :]  # (T, N): zero past each input's end
        if zero_infinity:
            kept = kept & (nll != np.inf)[None, :]
        return xp.where(kept[:, :, None], grad, 0).astype(log_probs.dtype, copy=False)
