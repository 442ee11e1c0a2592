"""Reductions over an axis tuple (None means all axes), through the array methods (``x.sum(...)``): the
same reductions as ``xp.sum(x, ...)`` without NumPy's Python-level dispatch, a microsecond per call; on NumPy
arrays sum, prod, amax, amin, cumsum and cumprod call the ufunc itself (what ``x.sum`` wraps), so that an IEEE warning
(inf - inf) names minitensor's module, which ``backends/__init__.py`` silences as PyTorch is silent. Also the
scans along one axis (cumsum, cumprod, cummax, cummin, logcumsumexp) and the stable sort order (argsort)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

Array = Any


def _ufunc_reduce(ufunc: Any, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
    """``ufunc.reduce`` over ``axis``: what ``x.sum()`` and its kin call, minus NumPy's Python wrapper."""
    return ufunc.reduce(x, axis=axis, keepdims=keepdims)


def _count(x: Array, axis: tuple[int, ...] | None) -> int:
    """How many elements each reduction over ``axis`` sees."""
    return x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))


class ReduceOps:
    xp: Any

    def sum(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        if type(x) is np.ndarray:  # the ufunc's reduce (see the module's docstring)
            return _ufunc_reduce(np.add, x, axis, keepdims)
        return x.sum(axis=axis, keepdims=keepdims)

    def mean(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        with np.errstate(divide="ignore", invalid="ignore"):  # an empty mean is nan without a warning (PyTorch)
            if type(x) is np.ndarray and x.size == 0:  # NumPy warns "Mean of empty slice" whatever the state
                return np.true_divide(x.sum(axis=axis, keepdims=keepdims), _count(x, axis),
                                      dtype=x.dtype if x.dtype.kind == "f" else np.float64)
            return x.mean(axis=axis, keepdims=keepdims)

    def var(self, x: Array, axis: tuple[int, ...] | None, correction: float, keepdims: bool) -> Array:
        with np.errstate(divide="ignore", invalid="ignore"):  # (NumPy's division happens in its own module)
            if type(x) is np.ndarray and _count(x, axis) - correction <= 0:  # NumPy warns "Degrees of freedom
                # <= 0" whatever the state; PyTorch gives sum((x - mean)^2) / (n - correction): inf or nan
                centred = x - self.mean(x, axis, keepdims=True)
                return np.true_divide((centred * centred).sum(axis=axis, keepdims=keepdims),
                                      max(_count(x, axis) - correction, 0), dtype=centred.dtype)
            return x.var(axis=axis, ddof=correction, keepdims=keepdims)

    def prod(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        if type(x) is np.ndarray:
            return _ufunc_reduce(np.multiply, x, axis, keepdims)
        return x.prod(axis=axis, keepdims=keepdims)

    def amax(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        if type(x) is np.ndarray:
            return _ufunc_reduce(np.maximum, x, axis, keepdims)
        return x.max(axis=axis, keepdims=keepdims)

    def amin(self, x: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        if type(x) is np.ndarray:
            return _ufunc_reduce(np.minimum, x, axis, keepdims)
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
        if type(x) is np.ndarray and x.dtype.kind == "f":  # the ufunc itself (see the module's docstring)
            return np.multiply.accumulate(x, axis=axis)
        return self.xp.cumprod(x, axis=axis)

    def cumsum(self, x: Array, axis: int) -> Array:
        """Running sums along ``axis``, in x's dtype."""
        if type(x) is np.ndarray:
            return np.add.accumulate(x, axis=axis, dtype=x.dtype)
        return self.xp.cumsum(x, axis=axis, dtype=x.dtype)

    def _scan(self, x: Array, axis: int, combine: Callable[[Array, Array], Array]) -> Array:
        """Inclusive scan of an associative ``combine`` along ``axis`` in log2(n) whole-array steps
        (Hillis-Steele): step k combines each element with the one 2^k before it. Written with xp's
        elementwise ops only, so it runs where ufunc.accumulate does not (CuPy)."""
        xp = self.xp
        out = xp.moveaxis(x, axis, -1)
        n, k = out.shape[-1], 1
        while k < n:
            out = xp.concatenate([out[..., :k], combine(out[..., k:], out[..., :-k])], axis=-1)
            k *= 2
        return xp.moveaxis(out, -1, axis)

    def cummax(self, x: Array, axis: int) -> tuple[Array, Array]:
        """Running maxima along ``axis`` and the int64 index of each: the latest position holding it (ties
        and nans included: a nan is the maximum from where it appears), as PyTorch."""
        return self._running_extreme(x, axis, self.xp.maximum)

    def cummin(self, x: Array, axis: int) -> tuple[Array, Array]:
        """Running minima and their indices, as ``cummax``."""
        return self._running_extreme(x, axis, self.xp.minimum)

    def _running_extreme(self, x: Array, axis: int, pick: Callable[[Array, Array], Array]) -> tuple[Array, Array]:
        xp = self.xp
        values = self._scan(x, axis, pick)
        # x[i] == values[i] exactly where the running extreme was (re)taken at i, so the index of values[j] is
        # the last such i <= j: a running maximum of those positions.
        hit = x == values
        if x.dtype.kind in "fV":
            hit |= xp.isnan(x)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        positions = xp.arange(x.shape[axis], dtype=np.int64).reshape(shape)
        return values, self._scan(xp.where(hit, positions, 0), axis, xp.maximum)

    def logcumsumexp(self, x: Array, axis: int) -> Array:
        """log(cumsum(exp(x))) along ``axis``, a scan of logaddexp: no overflow, no underflow of early terms."""
        return self._scan(x, axis, self.xp.logaddexp)

    def argsort(self, x: Array, axis: int, descending: bool) -> Array:
        """Stable sort order along ``axis`` (int64): equal elements keep their order, nans go last ascending
        and first descending, as PyTorch. Descending sorts the reversed array ascending and reverses the
        result, which keeps equal elements in their original order."""
        xp = self.xp
        if not descending:
            return xp.argsort(x, axis=axis, kind="stable").astype(np.int64, copy=False)
        n = x.shape[axis]
        order = xp.flip(xp.argsort(xp.flip(x, axis), axis=axis, kind="stable"), axis)
        return (n - 1 - order).astype(np.int64, copy=False)
