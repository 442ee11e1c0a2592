"""Random numbers from one generator per device, so one seed reproduces a run on that device."""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

Array = Any

class _ThreadState(threading.local):
    """A DataLoader worker thread draws from generators of its own, as a PyTorch worker process does: its
    seed, and one generator per backend, made from that seed on first use. Other threads have seed None
    (class attributes: read without an exception, which matters on every random op)."""
    seed: int | None = None
    rngs: dict[int, Any] = {}  # noqa: RUF012 - replaced, never mutated, while seed is None


_THREAD = _ThreadState()


def thread_seed() -> int | None:
    """The calling thread's own seed, or None where it draws from the shared generators."""
    return _THREAD.seed


def seed_thread(seed: int | None) -> None:
    """Give the calling thread generators of its own seeded with ``seed`` (None: the shared ones again)."""
    _THREAD.seed, _THREAD.rngs = seed, {}


class RandomOps:
    xp: Any
    _shared_rng: Any

    @property
    def _rng(self) -> Any:
        """The generator to draw from: the shared one, or the calling worker thread's own."""
        if _THREAD.seed is None:
            return self._shared_rng
        rng = _THREAD.rngs.get(id(self))
        if rng is None:
            rng = _THREAD.rngs[id(self)] = self.xp.random.default_rng(_THREAD.seed)
        return rng

    def seed(self, seed: int) -> None:
        """Reseed the generator the calling thread draws from."""
        if _THREAD.seed is None:
            self._shared_rng = self.xp.random.default_rng(seed)
        else:
            _THREAD.rngs[id(self)] = self.xp.random.default_rng(seed)

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
