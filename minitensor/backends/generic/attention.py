"""Attention's softmax over the keys, forward and backward, on the scores of scaled dot-product attention
(``functional/attention.py`` does the GEMMs, the bias and the dropout around them):

    P = softmax(S + M, dim=-1),  M = -inf on key j of query i where causal and j > i (top-left aligned)
    dS = P (dP - rowsum(dP P))

A row whose keys are all masked gives P = 0 (PyTorch's safe softmax), not 0 / 0. Both work in place on their
first argument, a fresh scores (or dP) array that nothing else holds.
"""
from __future__ import annotations

from typing import Any

import numpy as np

Array = Any


class AttentionOps:
    def attention_softmax(self, s: Array, causal: bool) -> Array:
        """P from the scores s (..., L, S), in place."""
        b: Any = self
        if s.size == 0:  # no keys (or no queries): nothing to normalise, and max has no identity
            return s
        if causal:  # -inf above the diagonal, 0 on and below
            s += b.triu(b.full(s.shape[-2:], -np.inf, s.dtype), 1)
        m = s.max(axis=-1, keepdims=True)
        m[~b.isfinite(m)] = 0  # -inf rows: exp(-inf - 0) = 0 below
        s -= m
        b.xp.exp(s, out=s)  # in place to the end: s holds P afterwards, as the CPU kernel leaves it
        total = s.sum(axis=-1, keepdims=True)
        total[total == 0] = 1
        s /= total
        return s

    def attention_softmax_backward(self, gp: Array, p: Array) -> Array:
        """dS from dP (..., L, S), in place of gp, and P."""
        gp *= p
        gp -= p * gp.sum(axis=-1, keepdims=True)
        return gp
