"""Shape and indexing: views where the array library gives them, plus the gradient helpers."""
from __future__ import annotations

from typing import Any, Sequence

Array = Any


class ShapeOps:
    xp: Any

    def reshape(self, x: Array, shape: Sequence[int]) -> Array:
        return self.xp.reshape(x, shape)

    def transpose(self, x: Array, axes: Sequence[int]) -> Array:
        return self.xp.transpose(x, axes)

    def broadcast_to(self, x: Array, shape: Sequence[int]) -> Array:
        return self.xp.broadcast_to(x, shape)

    def concatenate(self, arrays: Sequence[Array], axis: int) -> Array:
        return self.xp.concatenate(arrays, axis=axis)

    def stack(self, arrays: Sequence[Array], axis: int) -> Array:
        return self.xp.stack(arrays, axis=axis)

    def tile(self, x: Array, reps: Sequence[int]) -> Array:
        return self.xp.tile(x, reps)

    def pad(self, x: Array, pad_width: Sequence[tuple[int, int]], mode: str, value: float) -> Array:
        if mode == "constant":
            return self.xp.pad(x, pad_width, mode="constant", constant_values=value)
        return self.xp.pad(x, pad_width, mode=mode)

    def take_along_axis(self, x: Array, index: Array, axis: int) -> Array:
        return self.xp.take_along_axis(x, index, axis=axis)

    def scatter_add_along_axis(self, out: Array, index: Array, src: Array, axis: int) -> Array:
        """out[..., index[i], ...] += src[..., i, ...] along ``axis`` (the gradient of gather)."""
        self.index_add(out, self._along(index, axis), src)
        return out

    def _along(self, index: Array, axis: int) -> tuple[Array, ...]:
        """The advanced index that addresses out[..., index[i], ...] along ``axis``: an open grid of aranges
        over the other axes (CuPy's ``indices`` has no ``sparse=``)."""
        ndim = index.ndim
        idx = [self.xp.arange(n).reshape((n,) + (1,) * (ndim - 1 - d)) for d, n in enumerate(index.shape)]
        idx[axis] = index
        return tuple(idx)

    def scatter_along_axis(self, out: Array, index: Array, src: Array, axis: int, reduce: str | None) -> Array:
        """In place: out[..., index[i], ...] = src[..., i, ...] along ``axis`` (``reduce`` None), or combined
        with what is there by "sum", "prod", "amax" or "amin" (repeated indices all count). ``src`` has
        index's shape (or broadcasts to it: a scalar)."""
        idx = self._along(index, axis)
        if reduce is None:
            out[idx] = src
            return out
        src = self.xp.broadcast_to(src, index.shape)
        if reduce == "sum":
            return self.index_add(out, idx, src)
        return self.combine_at(reduce, out, idx, src)

    def combine_at(self, reduce: str, out: Array, index: Any, src: Array) -> Array:
        """In place: out[index] combined with src by "prod", "amax" or "amin", repeated indices all counting
        (NumPy's unbuffered ``ufunc.at``)."""
        ufunc = {"prod": self.xp.multiply, "amax": self.xp.maximum, "amin": self.xp.minimum}[reduce]
        ufunc.at(out, index, src)
        return out

    def roll(self, x: Array, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Array:
        """x shifted by ``shifts`` along ``axes``, wrapping around (a copy)."""
        return self.xp.roll(x, shifts, axes)

    def diagonal(self, x: Array, offset: int, axis1: int, axis2: int) -> Array:
        """The diagonal ``offset`` of the planes (axis1, axis2), as a last axis (a view, writable where x is:
        NumPy marks it read-only by caution only, and PyTorch's diagonal writes through)."""
        d = self.xp.diagonal(x, offset, axis1, axis2)
        if getattr(x.flags, "writeable", False) and not getattr(d.flags, "writeable", True):
            d.flags.writeable = True
        return d

    def diagonal_scatter(self, d: Array, shape: tuple[int, ...], offset: int, axis1: int, axis2: int) -> Array:
        """Zeros of ``shape`` with ``d`` (its last axis the diagonal) on the diagonal ``offset`` of the planes
        (axis1, axis2): the inverse of ``diagonal``."""
        out = self.xp.zeros(shape, dtype=d.dtype)
        n = d.shape[-1]
        rows = self.xp.arange(n) + max(-offset, 0)
        planes = self.xp.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writing it writes out
        planes[..., rows, rows + offset] = d
        return out

    def argwhere(self, x: Array) -> Array:
        """The indices of the non-zero elements, (count, ndim), in C order."""
        return self.xp.argwhere(x)

    def repeat(self, x: Array, repeats: Any, axis: int) -> Array:
        """Each element of x along ``axis`` repeated ``repeats`` times (an int, or one count per element)."""
        return self.xp.repeat(x, repeats, axis)

    def triangle_indices(self, row: int, col: int, offset: int, upper: bool) -> Array:
        """(2, N) int64: the row and column indices of the lower (or upper) triangle of a row x col matrix,
        diagonal ``offset`` included, in row-major order."""
        rows, cols = (self.xp.triu_indices if upper else self.xp.tril_indices)(row, offset, col)
        return self.xp.stack([rows, cols]).astype(self.xp.int64)

    def sliding_window(self, x: Array, size: int, step: int, axis: int) -> Array:
        """The windows of ``size`` along ``axis`` every ``step``: that axis counts windows and a new last
        axis runs through each (a strided view, PyTorch's ``unfold``)."""
        w = self.xp.lib.stride_tricks.sliding_window_view(x, size, axis=axis)
        return self.xp.moveaxis(self.xp.moveaxis(w, axis, 0)[::step], 0, axis)

    def sliding_window_add(self, g: Array, n: int, step: int, axis: int) -> Array:
        """The gradient of ``sliding_window``: each window's slice of g (..., windows, ..., size) added back
        at its place along ``axis`` (length n); overlaps add."""
        windows, size = g.shape[axis], g.shape[-1]
        rest = g.shape[:axis] + g.shape[axis + 1:-1]
        gm = self.xp.moveaxis(self.xp.moveaxis(g, axis, 0), -1, 1).reshape((windows * size,) + rest)
        pos = (self.xp.arange(windows)[:, None] * step + self.xp.arange(size)[None, :]).reshape(-1)
        out = self.xp.zeros((n,) + rest, dtype=g.dtype)
        self.index_add(out, pos, gm)
        return self.xp.moveaxis(out, 0, axis)

    def index_add(self, out: Array, index: Any, src: Array) -> Array:
        """out[index] += src with repeated indices accumulating (NumPy's unbuffered add.at)."""
        self.xp.add.at(out, index, src)
        return out

    def sum_to_shape(self, g: Array, shape: tuple[int, ...]) -> Array:
        """Sum a broadcast gradient back to ``shape``: the one rule for every broadcasting op."""
        if g.shape == shape:
            return g
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        return g.reshape(shape) if lead or g.shape != shape else g

    def split(self, x: Array, bounds: Sequence[int], axis: int) -> list[Array]:
        """x cut along ``axis`` at the positions ``bounds`` (views): len(bounds) + 1 pieces."""
        return self.xp.split(x, bounds, axis=axis)

    def moveaxis(self, x: Array, source: int, destination: int) -> Array:
        return self.xp.moveaxis(x, source, destination)

    def take(self, x: Array, index: Array, axis: int) -> Array:
        """The entries ``index`` (an integer array) of x along ``axis``: a copy."""
        return self.xp.take(x, index, axis=axis)

    def flip(self, x: Array, axis: int | tuple[int, ...]) -> Array:
        """x reversed along ``axis``: a view."""
        return self.xp.flip(x, axis)

    def tril(self, x: Array, k: int) -> Array:
        """x with the elements above diagonal ``k`` of its last two axes set to 0 (a copy)."""
        return self.xp.tril(x, k)

    def triu(self, x: Array, k: int) -> Array:
        """x with the elements below diagonal ``k`` of its last two axes set to 0 (a copy)."""
        return self.xp.triu(x, k)


def reduce_at(xp: Any, op: Any, out: Array, index: Any, src: Any) -> Array:
    """In place: ``out[index] = op(out[index], src)`` with repeated positions all combining (``op`` a binary
    ufunc of ``xp``: add, multiply, maximum, minimum...); ``src`` broadcasts to ``out[index]``'s shape and
    is cast to ``out``'s dtype. Returns ``out``.

    ``ufunc.at`` without ``ufunc.at``, for the ops and dtypes an array library has no unbuffered ``at`` for
    (CuPy 14 has ``add.at`` / ``maximum.at`` / ``minimum.at`` only, and not for every dtype:
    ``backends/cuda/backend.py`` says which). Every element of ``src`` gets the flat position it combines
    into (an arange of ``out``'s size indexed like ``out``); a stable sort brings equal positions together;
    a segmented Hillis-Steele scan (log2(n) rounds of whole-array ops, no host sync, no loop over elements)
    leaves each run's combination in its last element; one gather-combine-scatter writes the runs into
    ``out``, where no position repeats. Work O(n log n); the op must be associative (floating-point sums
    and products combine in a tree order, as a GPU's atomics combine in no fixed order)."""
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
