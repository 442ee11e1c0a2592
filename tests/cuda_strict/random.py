"""``cupy.random`` of the strict double: ``Generator`` / ``default_rng`` over NumPy's PCG64 (CuPy's is XORWOW
through cuRAND: the streams differ, the API does not), with CuPy's methods only and its refusal to be deepcopied
or pickled (its cuRAND state holds a lock: ``cannot pickle '_thread.lock' object``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import real
from .convert import wrap
from .functions import resolve


class Generator:
    """CuPy's ``cupy.random.Generator``: the names of the real class, NumPy's draws, device arrays out."""

    def __init__(self, bit_generator: Any) -> None:
        self._rng = np.random.Generator(bit_generator)

    def __getattr__(self, name: str) -> Any:
        getattr(real.cupy.random.Generator, name)  # AttributeError where CuPy's Generator has no such method
        method = getattr(self._rng, name)

        def draw(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("out") is not None:
                kwargs["out"] = kwargs["out"]._a
            return wrap(method(*args, **kwargs))
        return draw

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("cannot pickle '_thread.lock' object")

    def __deepcopy__(self, memo: Any) -> Any:
        raise TypeError("cannot pickle '_thread.lock' object")


def default_rng(seed: Any = None) -> Generator:
    return Generator(np.random.PCG64(seed))


def __getattr__(name: str) -> Any:
    """The legacy module-level draws (``cupy.random.rand``...), where real CuPy has them."""
    return resolve(name, real.cupy.random, np.random, {})
