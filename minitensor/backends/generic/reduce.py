"""Reductions over an axis tuple (None means all axes), through the array methods (``x.sum(...)``): the
same reductions as ``xp.sum(x, ...)`` without NumPy's Python-level dispatch, a microsecond per call."""
from __future__ import annotations

from typing import Any

import numpy as np

Array = Any


class ReduceOps:
    xp: Any

    def sum(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.sum(axis=axis, keepdims=keepdims)

    def mean(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.mean(axis=axis, keepdims=keepdims)

    def var(self, x: Array, axis: tuple[int, ...] | None, correction: float, keepdims: bool) -> Array:
        return x.var(axis=axis, ddof=correction, keepdims=keepdims)

    def prod(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.prod(axis=axis, keepdims=keepdims)

    def amax(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.max(axis=axis, keepdims=keepdims)

    def amin(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.min(axis=axis, keepdims=keepdims)

    def argmax(self, x: Array, axis: int | None, keepdims: bool) -> Array:
        return x.argmax(axis=axis, keepdims=keepdims)

    def argmin(self, x: Array, axis: int | None, keepdims: bool) -> Array:
        return x.argmin(axis=axis, keepdims=keepdims)

    def all(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.all(axis=axis, keepdims=keepdims)

    def any(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        return x.any(axis=axis, keepdims=keepdims)

    def logsumexp(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        """log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the max, so it cannot overflow."""
        xp = self.xp
        if x.size == 0:  # no max to shift by (an empty axis has none): log(0) = -inf there, as PyTorch
            with np.errstate(divide="ignore"):
                return xp.log(xp.sum(xp.exp(x), axis=axis, keepdims=keepdims))
        m = xp.amax(x, axis=axis, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)  # all -inf rows give -inf, not nan
        out = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
        return out if keepdims else xp.squeeze(out, axis=axis)

    def cumprod(self, x: Array, axis: int) -> Array:
        """Running products along ``axis``: out[..., i] = x[..., 0] * ... * x[..., i]."""
        return self.xp.cumprod(x, axis=axis)
