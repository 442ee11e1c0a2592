"""``make_tensor``: a random tensor of a dtype on a device, in PyTorch's default range for the dtype."""
from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor

_INTEGRAL = (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64)
_FLOATING = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _low_high(dtype: _dt.dtype, low: float | None, high: float | None, *, lowest: float, highest: float,
              default_low: float, default_high: float) -> tuple[float, float]:
    """The range asked for, checked and clamped to [lowest, highest); integers' bounds ceiled (randint's
    exclusive high)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING:
        warnings.warn("Passing `low==high` to `minitensor.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `minitensor.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if dtype is _dt.bool or dtype in _INTEGRAL:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape: Any, dtype: _dt.dtype, device: Any, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """Values drawn uniformly from [low, high); defaults: bool [0, 2), unsigned [0, 10), signed integers
    [-9, 10), floats [-9, 9). ``noncontiguous`` takes every other element of a doubled last dimension;
    ``exclude_zero`` replaces zeros by 1 (integers) or the dtype's ``tiny``."""
    from ..creation import empty, randint
    from ..type_info import finfo, iinfo
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"{noncontiguous=} and {memory_format=}")
    integral = dtype is _dt.bool or dtype in _INTEGRAL
    if requires_grad and integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # doubled, so that the elements kept differ from their dropped neighbours
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dt.bool:
        lo, hi = _low_high(dtype, low, high, lowest=0, highest=2, default_low=0, default_high=2)
        result = randint(int(lo), int(hi), shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = iinfo(dtype)  # int64's max itself cannot be drawn: randint's bound is an int64
        lo, hi = _low_high(dtype, low, high, lowest=info.min, highest=info.max + (dtype is not _dt.int64),
                           default_low=-9, default_high=10)
        result = randint(int(lo), int(hi), shape, device=device, dtype=dtype)
    elif dtype in _FLOATING:
        fi = finfo(dtype)
        lo, hi = _low_high(dtype, low, high, lowest=fi.min, highest=fi.max, default_low=-9, default_high=9)
        result = empty(shape, device=device, dtype=dtype)
        if hi - lo >= fi.max:  # uniform_ needs a finite width: halve the range, then double the draws
            result.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            result.uniform_(lo, hi)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by minitensor.testing.make_tensor().")
    if noncontiguous:
        result = result[..., 1::2]  # offset by one, to catch offset bugs too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if dtype in _FLOATING:
        result.requires_grad = requires_grad
    return result
