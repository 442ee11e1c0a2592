"""Random numbers from one generator per device, so one seed reproduces a run on that device."""
from __future__ import annotations

import copy
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

    def get_rng(self) -> Any:
        """The generator the calling thread draws from (checkpointing copies it to replay the draws)."""
        return self._rng

    def copy_rng(self, rng: Any = None) -> Any:
        """An independent copy of ``rng`` (default: the calling thread's generator) that replays its draws:
        what checkpointing and ``fork_rng`` keep, and hand back through ``set_rng``."""
        return copy.deepcopy(self._rng if rng is None else rng)

    def set_rng(self, rng: Any) -> None:
        """Make ``rng`` (from ``get_rng``) the generator the calling thread draws from."""
        if _THREAD.seed is None:
            self._shared_rng = rng
        else:
            _THREAD.rngs[id(self)] = rng

    def seed(self, seed: int) -> None:
        """Reseed the generator the calling thread draws from."""
        if _THREAD.seed is None:
            self._shared_rng = self.xp.random.default_rng(seed)
        else:
            _THREAD.rngs[id(self)] = self.xp.random.default_rng(seed)

    def uniform(self, shape: Sequence[int], low: float, high: float, dtype: np.dtype, rng: Any = None) -> Array:
        """U[low, high) drawn in ``dtype`` (no float64 detour for float32). ``rng``: a user's
        ``minitensor.Generator``'s stream on this device (``Generator.stream``) instead of the device's."""
        dtype = np.dtype(dtype)
        draw_dtype = dtype if dtype in (np.float32, np.float64) else np.float64
        u = (rng or self._rng).random(tuple(shape), dtype=draw_dtype)
        if low != 0.0 or high != 1.0:
            u *= high - low
            u += low
        return u.astype(dtype, copy=False)

    def normal(self, shape: Sequence[int], mean: float, std: float, dtype: np.dtype, rng: Any = None) -> Array:
        dtype = np.dtype(dtype)
        draw_dtype = dtype if dtype in (np.float32, np.float64) else np.float64
        z = (rng or self._rng).standard_normal(tuple(shape), dtype=draw_dtype)
        if std != 1.0:
            z *= std
        if mean != 0.0:
            z += mean
        return z.astype(dtype, copy=False)

    def randint(self, low: int, high: int, shape: Sequence[int], dtype: np.dtype, rng: Any = None) -> Array:
        """Integers in [low, high); a span past int64's (random_() of a whole int64 range) is drawn as uint64
        offsets from low, wrapping to int64 as two's complement."""
        if high - 1 > np.iinfo(np.int64).max:
            offsets = (rng or self._rng).integers(0, high - low, size=tuple(shape), dtype=np.uint64)
            return (offsets + np.uint64(low % 2**64)).astype(np.int64).astype(dtype, copy=False)
        return (rng or self._rng).integers(low, high, size=tuple(shape), dtype=dtype)

    def _open_unit(self, shape: Sequence[int], dtype: np.dtype, rng: Any) -> Array:
        """1 - U[0, 1) = U(0, 1] in float32 (float64 for float64), where the draws below are transformed
        (then cast to ``dtype``): never 0, so its log is finite."""
        draw_dtype = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        return 1 - (rng or self._rng).random(tuple(shape), dtype=draw_dtype)

    def exponential(self, shape: Sequence[int], lambd: float, dtype: np.dtype, rng: Any = None) -> Array:
        """Exp(lambd) by inversion: -log(u) / lambd, u in (0, 1]."""
        u = self._open_unit(shape, dtype, rng)
        return (-self.xp.log(u) / u.dtype.type(lambd)).astype(dtype, copy=False)

    def geometric(self, shape: Sequence[int], p: float, dtype: np.dtype, rng: Any = None) -> Array:
        """The number of Bernoulli(p) trials up to the first success (1, 2, ...): ceil(log(u) / log(1 - p)) by
        inversion, at least 1."""
        u = self._open_unit(shape, dtype, rng)
        k = self.xp.ceil(self.xp.log(u) / u.dtype.type(np.log1p(-p)))
        return self.xp.maximum(k, 1).astype(dtype, copy=False)

    def cauchy(self, shape: Sequence[int], median: float, sigma: float, dtype: np.dtype, rng: Any = None) -> Array:
        """Cauchy(median, sigma) by inversion: median + sigma tan(pi (u - 1/2))."""
        u = self._open_unit(shape, dtype, rng)
        return (median + sigma * self.xp.tan(u.dtype.type(np.pi) * (u - u.dtype.type(0.5)))).astype(dtype, copy=False)

    def poisson(self, rates: Array, rng: Any = None) -> Array:
        """Poisson counts, one per element of the non-negative ``rates``, in rates' dtype (an array for 0-d
        rates too, where NumPy's generator returns a Python int)."""
        counts = (rng or self._rng).poisson(rates.astype(np.float64))
        return self.xp.asarray(counts, dtype=rates.dtype)

    def standard_gamma(self, alpha: Array, rng: Any = None) -> Array:
        """Gamma(alpha, 1) draws, one per element of the positive ``alpha``, in alpha's dtype (drawn in
        float64, then rounded; a draw that rounds to 0 is raised to the dtype's smallest normal, as PyTorch
        clamps its samples, so that log_prob and the gradient stay finite)."""
        draws = self.xp.asarray((rng or self._rng).standard_gamma(alpha.astype(np.float64)), dtype=alpha.dtype)
        return self.xp.maximum(draws, np.finfo(alpha.dtype).tiny)

    def bernoulli(self, p: Any, shape: Sequence[int], rng: Any = None) -> Array:
        """A bool array, True with probability p (a number, or an array broadcasting to ``shape``)."""
        draw_dtype = p.dtype if getattr(p, "dtype", None) in (np.float32, np.float64) else np.float32
        return self.xp.asarray((rng or self._rng).random(tuple(shape), dtype=draw_dtype) < p)  # 0-d: a scalar

    def multinomial(self, probs: Array, num_samples: int, replacement: bool, rng: Any = None) -> Array:
        """(rows, num_samples) int64 category indices drawn from each row of the non-negative weights ``probs``
        (rows, categories). With replacement: inverse CDF, every row's normalised CDF offset by its row
        number so one sorted search serves all rows. Without: the ``num_samples`` largest keys
        log(u) / w (Efraimidis-Spirakis: the same law as drawing one at a time and removing it)."""
        xp = self.xp
        rows, categories = probs.shape
        w = probs.astype(np.float64)
        u = (rng or self._rng).random((rows, num_samples if replacement else categories))
        if replacement:
            cdf = xp.cumsum(w, axis=1)
            cdf /= cdf[:, -1:]
            cdf[:, -1] = 1.0  # the last category ends its row exactly, whatever the rounding
            offsets = xp.arange(rows, dtype=np.float64)[:, None]
            found = xp.searchsorted((cdf + offsets).reshape(-1), (u + offsets).reshape(-1), side="right")
            found = found.reshape(rows, num_samples) - xp.arange(rows)[:, None] * categories
            return xp.minimum(found, categories - 1).astype(np.int64)
        with np.errstate(divide="ignore"):
            keys = xp.log(u) / w  # weight 0: -inf, never drawn before a positive weight
        return xp.argsort(-keys, axis=1, kind="stable")[:, :num_samples].astype(np.int64)

    def permutation(self, n: int, rng: Any = None) -> Array:
        return (rng or self._rng).permutation(n)
