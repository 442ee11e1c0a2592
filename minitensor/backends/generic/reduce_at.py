"""``ufunc.at`` without ``ufunc.at``: ``out[index] op= src`` where repeated positions all combine, for the ops
and dtypes an array library has no unbuffered ``at`` for (CuPy 14 has ``add.at`` / ``maximum.at`` /
``minimum.at`` only, and not for every dtype: ``backends/cuda/backend.py`` says which).

The way: every element of ``src`` gets the flat position it combines into (an arange of ``out``'s size
indexed like ``out``); a stable sort brings equal positions together; a segmented Hillis-Steele scan
(log2(n) rounds of whole-array ops, no host sync, no loop over elements) leaves each run's combination in
its last element; one gather-combine-scatter writes the runs into ``out``, where no position repeats.
Work O(n log n) over the n elements of ``src``; the op must be associative (floating-point sums and
products combine in a tree order, as a GPU's atomics combine in no fixed order).
"""
from __future__ import annotations

from typing import Any

Array = Any


def reduce_at(xp: Any, op: Any, out: Array, index: Any, src: Any) -> Array:
    """In place: ``out[index] = op(out[index], src)`` with repeated positions all combining (``op`` a binary
    ufunc of ``xp``: add, multiply, maximum, minimum...); ``src`` broadcasts to ``out[index]``'s shape and
    is cast to ``out``'s dtype. Returns ``out``."""
    positions = xp.arange(out.size).reshape(out.shape)[index]
    pos = positions.reshape(-1)
    if pos.size == 0:
        return out
    values = xp.broadcast_to(xp.asarray(src, dtype=out.dtype), positions.shape).reshape(-1)
    order = xp.argsort(pos, kind="stable")
    pos, values = pos[order], values[order]
    n, shift = pos.size, 1
    while shift < n:  # values[i] becomes op over its run's elements i-2*shift+1 .. i
        same = pos[shift:] == pos[:-shift]
        values[shift:] = xp.where(same, op(values[:-shift], values[shift:]), values[shift:])
        shift *= 2
    last = xp.ones(n, dtype=bool)
    last[:-1] = pos[1:] != pos[:-1]
    where = xp.unravel_index(pos[last], out.shape)
    out[where] = op(out[where], values[last])
    return out
