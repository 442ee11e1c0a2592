"""Random numbers from one generator per device, so one seed reproduces a run on that device."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

Array = Any


class RandomOps:
    xp: Any
    _rng: Any

    def seed(self, seed: int) -> None:
        self._rng = self.xp.random.default_rng(seed)

    def uniform(self, shape: Sequence[int], low: float, high: float, dtype: np.dtype) -> Array:
        """U[low, high) drawn in ``dtype`` (no float64 detour for float32)."""
        dtype = np.dtype(dtype)
        draw_dtype = dtype if dtype in (np.float32, np.float64) else np.float64
        u = self._rng.random(tuple(shape), dtype=draw_dtype)
        if low != 0.0 or high != 1.0:
            u *= high - low
            u += low
        return u.astype(dtype, copy=False)

    def normal(self, shape: Sequence[int], mean: float, std: float, dtype: np.dtype) -> Array:
        dtype = np.dtype(dtype)
        draw_dtype = dtype if dtype in (np.float32, np.float64) else np.float64
        z = self._rng.standard_normal(tuple(shape), dtype=draw_dtype)
        if std != 1.0:
            z *= std
        if mean != 0.0:
            z += mean
        return z.astype(dtype, copy=False)

    def randint(self, low: int, high: int, shape: Sequence[int], dtype: np.dtype) -> Array:
        return self._rng.integers(low, high, size=tuple(shape), dtype=dtype)

    def bernoulli(self, p: float, shape: Sequence[int]) -> Array:
        """A bool array, True with probability p."""
        return self._rng.random(tuple(shape), dtype=np.float32) < p

    def permutation(self, n: int) -> Array:
        return self._rng.permutation(n)
