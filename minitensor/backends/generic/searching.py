"""Searching and counting on ``xp``: unique (sorted or consecutive, of elements or of slices along an axis),
searchsorted, bincount, histc and isin. Indices and counts are int64. bfloat16 (a NumPy extension type whose
sort misplaces nans) is searched and sorted as float32, which holds every bfloat16 exactly."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

Array = Any


class SearchOps:
    xp: Any

    def _ordered(self, x: Array) -> Array:
        """``x`` in a dtype xp sorts and searches correctly: bfloat16 as float32, the rest as they are."""
        return x.astype(np.float32) if x.dtype.kind == "V" else x

    def unique(self, x: Array, axis: int | None, consecutive: bool) -> tuple[Array, Array, Array]:
        """(values, inverse, counts) of the distinct elements of ``x`` (``axis`` None: flattened) or of its
        slices along ``axis``, sorted ascending (lexicographically for slices, nans last), or with
        ``consecutive`` the runs of equal neighbours in their order. Equal means ``==``, so every nan is
        distinct; the first of equal elements (stably) stands for them. values[inverse] rebuilds ``x``
        (inverse has x's shape, or (x.shape[axis],)); counts[i] is how many elements values[i] stands for."""
        xp = self.xp
        moved = x.reshape(-1, 1) if axis is None else xp.moveaxis(x, axis, 0)
        rows = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))  # one row per element or per slice
        n = rows.shape[0]
        order = None
        if not consecutive and n:
            keys = self._ordered(rows)
            # Stability shows only in which of 0.0 and -0.0 stands for both (the first): integers sort faster
            # without it. lexsort (stable) takes its last key as the primary one: the rows' first column.
            kind = "stable" if keys.dtype.kind == "f" else None
            order = xp.argsort(keys[:, 0], kind=kind) if keys.shape[1] == 1 else xp.lexsort(keys.T[::-1])
            rows = rows[order]
        starts = xp.ones(n, dtype=bool)
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        group = xp.cumsum(starts, dtype=np.int64) - 1
        if order is None:
            inverse = group
        else:  # group numbers belong to the sorted rows: scatter them back to the rows' places
            inverse = xp.empty_like(group)
            inverse[order] = group
        counts = xp.diff(xp.flatnonzero(starts), append=n).astype(np.int64, copy=False)
        values = rows[starts]
        if axis is None:
            return values.reshape(-1), inverse.reshape(x.shape), counts
        return xp.moveaxis(values.reshape((-1,) + moved.shape[1:]), 0, axis), inverse, counts

    def searchsorted(self, seq: Array, values: Array, right: bool, sorter: Array | None) -> Array:
        """For each value, the int64 index where it would go in the ascending ``seq`` (..., n) searched along
        its last dim: the first i with seq[i] >= value (``right``: > value), n if none. A 1-D ``seq`` serves
        every value; an N-D one pairs row by row with ``values`` (..., m) of the same batch dims. ``sorter``
        (seq's shape) gives the order that sorts each row. A sequence holding nans is searched by PyTorch's
        own bisection, whose answer there depends on the probes it makes; xp's searchsorted places nans
        last, which gives the same answer only without them."""
        xp = self.xp
        if sorter is not None:
            seq = xp.take_along_axis(seq, sorter, axis=-1)
        seq, values = self._ordered(seq), self._ordered(values)
        if seq.ndim == 1 and not (seq.dtype.kind == "f" and bool(xp.isnan(seq).any())):
            return xp.searchsorted(seq, values, side="right" if right else "left").astype(np.int64, copy=False)
        n, batch = seq.shape[-1], math.prod(seq.shape[:-1])
        rows = seq.reshape(batch, n)  # explicit sizes: -1 cannot be inferred from 0 elements
        keys = values.reshape(batch, values.shape[-1] if seq.ndim > 1 else values.size)
        lo = xp.zeros(keys.shape, dtype=np.int64)
        hi = xp.full(keys.shape, n, dtype=np.int64)
        # Every lane bisects [lo, hi) in step, as PyTorch's loop does for one value: probe the middle and
        # move lo past it unless the probe is >= the value (> for right). Finished lanes (lo == hi) stay.
        for _ in range(n.bit_length()):
            mid = (lo + hi) >> 1
            probe = xp.take_along_axis(rows, xp.minimum(mid, n - 1), axis=1)
            past = ~(probe > keys) if right else ~(probe >= keys)
            lo = xp.where(past, xp.minimum(mid + 1, hi), lo)
            hi = xp.where(past, hi, mid)
        return lo.reshape(values.shape)

    def bincount(self, x: Array, weights: Array | None, minlength: int) -> Array:
        """out[i] = the number of x == i (with ``weights``: the sum of their weights, in weights' dtype), for
        i < max(max(x) + 1, minlength); ``x`` is 1-D, non-empty and non-negative."""
        extra = {"minlength": minlength} if minlength else {}  # CuPy refuses minlength=0
        out = self.xp.bincount(x, weights, **extra)
        return out.astype(np.int64 if weights is None else weights.dtype, copy=False)

    def histc(self, x: Array, bins: int, low: float, high: float) -> Array:
        """Counts of ``x`` (non-empty, floating) in ``bins`` equal bins over [low, high], in x's dtype:
        element v falls in bin trunc((v - low) * bins / (high - low)), computed in x's dtype as PyTorch does,
        and v == high in the last; values outside the range and nans are not counted."""
        xp = self.xp
        t = x.dtype.type
        lo, hi = t(low), t(high)
        with np.errstate(invalid="ignore", over="ignore"):  # nans, and overflows outside the range: dropped
            inside = (x >= lo) & (x <= hi)  # False for nan
            place = (x - lo) * t(bins) / (hi - lo)
        # Every value outside the range goes to one extra bin (cut off below), so nothing is compacted.
        index = xp.where(inside, xp.minimum(xp.where(inside, place, 0).astype(np.int64), bins - 1), bins)
        return xp.bincount(index.reshape(-1), minlength=bins + 1)[:bins].astype(x.dtype)

    def isin(self, elements: Array, test: Array, invert: bool) -> Array:
        """Whether each element equals (``==``: nans never do) some element of ``test``, with ``invert`` the
        negation; bool, of elements' shape."""
        found = self.xp.isin(self._ordered(elements).reshape(-1), self._ordered(test).reshape(-1), invert=invert)
        return found.reshape(elements.shape)
