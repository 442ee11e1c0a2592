"""The kit of ``test_cuda_backend.py``'s parity cases: host data per case and dtype, arguments made per
backend, and the ``CASES`` list that ``case`` fills (here, in the test module and in the ``backend_cases_*``
modules, one per family of Backend methods). Nothing here needs a GPU, so the cases can be built and run on
the NumPy backend alone."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minitensor.backends import get_backend
from minitensor.backends.base import Backend

CPU = get_backend("cpu")
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
FLOATS = (F32, F64)
WITH_HALF = (F16, F32, F64)
ONCE = (F64,)  # cases whose dtypes are fixed by the case itself


class On:
    """An argument made per backend by ``make(B)``: a view of a device array, a backend's own forward output
    for a backward, or a host array that must reach the method as it is."""

    def __init__(self, make: Callable[[Backend], Any]) -> None:
        self.make = make


def host(a: np.ndarray) -> On:
    return On(lambda B: a)


def transposed(a: np.ndarray) -> On:
    return On(lambda B: B.asarray(a).T)


class Data:
    """Host inputs for one case in one dtype, from a generator seeded by the case's id."""

    def __init__(self, dt: np.dtype, seed: int) -> None:
        self.dt, self.r = dt, np.random.default_rng(seed)

    def n(self, *shape: int) -> np.ndarray:
        return self.r.standard_normal(shape).astype(self.dt)

    def pos(self, *shape: int) -> np.ndarray:
        return (np.abs(self.r.standard_normal(shape)) + 0.1).astype(self.dt)

    def uniform(self, low: float, high: float, *shape: int) -> np.ndarray:
        return self.r.uniform(low, high, shape).astype(self.dt)

    def away(self, *shape: int) -> np.ndarray:
        """Normal values kept 0.05 away from the kinks at 0 and +-1 (relu, hardtanh)."""
        a = self.r.standard_normal(shape)
        for kink in (-1.0, 0.0, 1.0):
            near = np.abs(a - kink) < 0.05
            a[near] = kink + 0.1
        return a.astype(self.dt)

    def ints(self, low: int, high: int, *shape: int) -> np.ndarray:
        return self.r.integers(low, high, shape)

    def bools(self, *shape: int) -> np.ndarray:
        return self.r.random(shape) < 0.5

    def probs(self, *shape: int) -> np.ndarray:
        e = np.exp(self.r.standard_normal(shape))
        return (e / e.sum(axis=1, keepdims=True)).astype(self.dt)

    def with_edges(self, x: np.ndarray, edges: list[float]) -> np.ndarray:
        """``x`` with its first elements (in C order) replaced by ``edges`` (in x's dtype)."""
        x = x.copy()
        x.reshape(-1)[:len(edges)] = np.array(edges, dtype=np.float64).astype(self.dt)
        return x


CASES: list[tuple[str, str, Callable[[Data], tuple], tuple[np.dtype, ...]]] = []


def case(name: str, label: str, build: Callable[[Data], tuple], dtypes: tuple[np.dtype, ...] = FLOATS) -> None:
    CASES.append((name, label, build, dtypes))
