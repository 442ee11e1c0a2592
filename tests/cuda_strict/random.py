"""``cupy.random`` of the strict double: ``Generator`` / ``default_rng`` built as CuPy 14 builds them - a
``Generator`` holding a ``bit_generator`` whose state lives in a device array next to a ``threading.Lock`` - so
``copy.deepcopy`` and pickling fail as CuPy's do ("cannot pickle '_thread.lock' object") while a copy of the
state array replays the draws. The draws are NumPy's PCG64 on that state (CuPy's are XORWOW through cuRAND:
the streams differ, the API does not), with CuPy's Generator methods only."""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from . import real
from .convert import unwrap, wrap
from .functions import resolve

_MASK = (1 << 64) - 1


def _encode(state: dict) -> np.ndarray:
    s, inc = state["state"]["state"], state["state"]["inc"]
    return np.array([s >> 64, s & _MASK, inc >> 64, inc & _MASK, state["has_uint32"], state["uinteger"]],
                    dtype=np.uint64)


def _decode(words: np.ndarray) -> dict:
    w = [int(v) for v in words]
    return {"bit_generator": "PCG64", "state": {"state": w[0] << 64 | w[1], "inc": w[2] << 64 | w[3]},
            "has_uint32": w[4], "uinteger": w[5]}


class XORWOW:
    """CuPy's default BitGenerator: a lock, a seed and the generator's state in device memory (``_state``)."""

    def __init__(self, seed: Any = None) -> None:
        self.lock = threading.Lock()
        self._seed = seed
        self._state = wrap(_encode(np.random.PCG64(seed).state))


class Generator:
    """CuPy's ``cupy.random.Generator``: the names of the real class, NumPy's draws from the bit generator's
    device state (read before and written back after each draw), device arrays out."""

    def __init__(self, bit_generator: Any) -> None:
        self.bit_generator = bit_generator
        self._binomial_state = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        getattr(real.cupy.random.Generator, name)  # AttributeError where CuPy's Generator has no such method

        def draw(*args: Any, **kwargs: Any) -> Any:
            words = self.bit_generator._state._a
            bits = np.random.PCG64()
            bits.state = _decode(words)
            result = getattr(np.random.Generator(bits), name)(*unwrap(args), **unwrap(kwargs))
            words[:] = _encode(bits.state)
            return wrap(result)
        return draw


def default_rng(seed: Any = None) -> Generator:
    return Generator(XORWOW(seed))


def __getattr__(name: str) -> Any:
    """The legacy module-level draws (``cupy.random.rand``...), where real CuPy has them."""
    return resolve(name, real.cupy.random, np.random, {})
