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
        ndim = index.ndim  # an open grid of aranges (CuPy's ``indices`` has no ``sparse=``)
        idx = [self.xp.arange(n).reshape((n,) + (1,) * (ndim - 1 - d)) for d, n in enumerate(index.shape)]
        idx[axis] = index
        self.index_add(out, tuple(idx), src)
        return out

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
