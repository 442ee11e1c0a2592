"""Array creation, conversion and copies."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

Array = Any


class ArrayOps:
    xp: Any

    def asarray(self, obj: Any, dtype: np.dtype | None = None) -> Array:
        return self.xp.asarray(obj, dtype=dtype)

    def to_numpy(self, a: Array) -> np.ndarray:
        return np.asarray(a)

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> Array:
        return self.xp.empty(shape, dtype=dtype)

    def zeros(self, shape: Sequence[int], dtype: np.dtype) -> Array:
        return self.xp.zeros(shape, dtype=dtype)

    def ones(self, shape: Sequence[int], dtype: np.dtype) -> Array:
        return self.xp.ones(shape, dtype=dtype)

    def full(self, shape: Sequence[int], value: Any, dtype: np.dtype) -> Array:
        return self.xp.full(shape, value, dtype=dtype)

    def arange(self, start: Any, end: Any, step: Any, dtype: np.dtype) -> Array:
        return self.xp.arange(start, end, step, dtype=dtype)

    def linspace(self, start: float, end: float, steps: int, dtype: np.dtype) -> Array:
        """PyTorch's points, in float64: start + step*i over the first half, end - step*(steps-1-i) over the
        rest (so both ends are exact); integer dtypes truncate the bounds and the points toward zero."""
        xp = self.xp
        if np.dtype(dtype).kind in "iu":
            start, end = int(start), int(end)
        i = xp.arange(steps, dtype=xp.float64)
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        points = xp.where(i < max(steps // 2, 1), start + step * i, end - step * (steps - 1 - i))
        return points.astype(dtype, copy=False)

    def empty_strided(self, shape: Sequence[int], strides: Sequence[int], dtype: np.dtype) -> Array:
        """Uninitialised memory viewed with ``strides`` (in elements, non-negative): one buffer just large
        enough for the furthest element, as PyTorch's ``empty_strided``."""
        itemsize = np.dtype(dtype).itemsize
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
        buffer = self.xp.empty(max(extent, 1), dtype=dtype)
        return self.xp.lib.stride_tricks.as_strided(buffer, tuple(shape), tuple(s * itemsize for s in strides))

    def eye(self, n: int, m: int, dtype: np.dtype) -> Array:
        return self.xp.eye(n, m, dtype=dtype)

    def astype(self, a: Array, dtype: np.dtype) -> Array:
        """A copy in ``dtype``; the same array when it already has it."""
        return a.astype(dtype, copy=False)

    def copy(self, a: Array) -> Array:
        return self.xp.array(a, copy=True)

    def ascontiguous(self, a: Array) -> Array:
        return self.xp.ascontiguousarray(a)

    def copy_into(self, dst: Array, src: Array) -> None:
        """dst[...] = src, broadcasting and casting src."""
        dst[...] = src

    def isfinite_all(self, a: Array) -> bool:
        """True when every element is finite (one host sync on a GPU: used by anomaly mode only)."""
        return bool(self.xp.isfinite(a).all())

    def data_ptr(self, a: Array) -> int:
        """The address of a's first element."""
        return int(a.__array_interface__["data"][0])

    def storage_offset(self, a: Array) -> int:
        """Bytes from the start of the memory a views (its outermost array base) to a's first element."""
        root = a
        while isinstance(root.base, type(a)):
            root = root.base
        return self.data_ptr(a) - self.data_ptr(root)

    def may_share_memory(self, a: Array, b: Array) -> bool:
        """Whether a and b may overlap in memory (a cheap bounds check: True can be a false alarm)."""
        return bool(self.xp.may_share_memory(a, b))
