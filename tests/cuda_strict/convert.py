"""Crossing the host/device line in the strict CuPy double: unwrap device arrays for NumPy, wrap NumPy's results,
and refuse host arrays where CuPy 14 does (its ufuncs and routines raise TypeError on a ``numpy.ndarray``)."""
from __future__ import annotations

from typing import Any

import numpy as np

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array "
            "explicitly.")


def device_type() -> type:
    from .ndarray import ndarray
    return ndarray


def refuse_host(value: Any, where: str) -> None:
    """TypeError when ``value`` (or a list/tuple member) is a host NumPy array, as CuPy's routines raise."""
    if isinstance(value, np.ndarray):
        raise TypeError(f"Unsupported type {type(value)} (in {where}; the strict CuPy double refuses host arrays)")
    if isinstance(value, (list, tuple)):
        for v in value:
            refuse_host(v, where)


def unwrap(value: Any) -> Any:
    """The NumPy array under a device array, recursively through lists, tuples and dicts."""
    if isinstance(value, device_type()):
        return value._a
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    if isinstance(value, tuple):
        return tuple(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def wrap(value: Any) -> Any:
    """Device arrays for NumPy's arrays and scalars (CuPy's reductions give 0-d arrays, never scalars)."""
    if isinstance(value, np.ndarray):
        return device_type()._of(value)
    if isinstance(value, np.generic):
        return device_type()._of(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(wrap(v) for v in value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value
