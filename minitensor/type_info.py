"""``finfo`` and ``iinfo``: PyTorch's numerical limits of the floating and integer dtypes.

The numbers come from NumPy's ``finfo`` / ``iinfo`` (ml_dtypes' for bfloat16) as Python floats and ints.
``resolution`` is 10^-precision, where precision is the number of decimal digits the dtype keeps.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from . import dtypes as _dt

__all__ = ["finfo", "iinfo"]

_DEFAULT = object()  # finfo() means the default dtype; finfo(None) is an error, as PyTorch


class _TypeInfo:
    """Read-only attributes (set once in ``__init__``), PyTorch's repr and equality."""

    __slots__ = ("bits", "min", "max", "dtype")
    _shown: tuple[str, ...] = ()
    bits: int
    min: float  # an int for iinfo
    max: float
    dtype: str  # the dtype's name, as PyTorch's

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"attribute '{name}' of 'minitensor.{type(self).__name__}' objects is not writable")

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name):g}" for name in self._shown)
        return f"{type(self).__name__}({shown}, dtype={self.dtype})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dtype))


def _checked(kind: str, d: Any) -> _dt.dtype:
    if not isinstance(d, _dt.dtype):
        raise TypeError(f"{kind}(): argument 'type' (position 1) must be minitensor.dtype, not {type(d).__name__}")
    return d


class finfo(_TypeInfo):
    """Limits of a floating dtype (the default dtype when none is given): ``bits``, ``eps`` (the gap
    between 1 and the next number), ``max``, ``min`` (= -max), ``tiny`` = ``smallest_normal`` (the
    smallest positive normal number) and ``resolution``."""

    __slots__ = ("eps", "tiny", "smallest_normal", "resolution")
    eps: float
    tiny: float
    smallest_normal: float
    resolution: float
    _shown = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")

    def __init__(self, type: Any = _DEFAULT) -> None:  # PyTorch's argument name
        d = _dt.get_default_dtype() if type is _DEFAULT else _checked("finfo", type)
        if not d.is_floating_point:
            raise TypeError("minitensor.finfo() requires a floating point input type. Use minitensor.iinfo to "
                            "handle 'minitensor.finfo'")
        info: Any = ml_dtypes.finfo(d.np) if d is _dt.bfloat16 else np.finfo(d.np)
        normal = float(info.smallest_normal)
        self._set(bits=int(info.bits), eps=float(info.eps), max=float(info.max), min=float(info.min), tiny=normal,
                  smallest_normal=normal, resolution=10.0 ** -int(info.precision), dtype=d.name)


class iinfo(_TypeInfo):
    """Limits of an integer dtype: ``bits``, ``min``, ``max`` (Python ints)."""

    __slots__ = ()
    _shown = ("min", "max")

    def __init__(self, type: Any) -> None:
        d = _checked("iinfo", type)
        if d is _dt.bool:
            raise TypeError("minitensor.bool is not supported by minitensor.iinfo")
        if d.category != 1:
            raise TypeError("minitensor.iinfo() requires an integer input type. Use minitensor.finfo to handle "
                            "'minitensor.iinfo'")
        info = np.iinfo(d.np)
        self._set(bits=int(info.bits), min=int(info.min), max=int(info.max), dtype=d.name)
