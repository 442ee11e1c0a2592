"""dtypes as PyTorch names them, and PyTorch's type promotion.

Promotion: the result's category (bool < integer < floating) is the highest among the operands. Within
that category, dimensioned tensors outrank zero-dim tensors, which outrank Python scalars; a Python
scalar of a higher category than every tensor gives that category's default dtype (float32, int64).
So ``float32_tensor * 2.5`` stays float32 and ``int64_tensor / 2`` is float32, unlike NumPy. float16 with
bfloat16 gives float32 (neither holds the other), as in PyTorch.

bfloat16 is ml_dtypes' (JAX's) NumPy dtype, whose NumPy ``kind`` is "V": code that asks "is this array
floating?" tests ``kind in "fV"`` (minitensor makes no other "V" arrays).
"""
from __future__ import annotations

from typing import Any

import builtins

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type; wraps the NumPy dtype that backends use (``.np``)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "category")

    def __init__(self, name: str, np_dtype: Any, category: builtins.int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "if" or category == 2  # bfloat16's NumPy kind is "V"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"minitensor.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float16 = half = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2)  # NumPy has none: ml_dtypes' (JAX's) bfloat16
float32 = float = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
int8 = dtype("int8", np.int8, 1)
uint8 = dtype("uint8", np.uint8, 1)
int16 = short = dtype("int16", np.int16, 1)
int32 = int = dtype("int32", np.int32, 1)
int64 = long = dtype("int64", np.int64, 1)
bool = dtype("bool", np.bool_, 0)

_BY_NUMPY = {d.np: d for d in (float16, bfloat16, float32, float64, int8, uint8, int16, int32, int64, bool)}
_BY_NAME = {d.name: d for d in _BY_NUMPY.values()}
_DEFAULT_BY_CATEGORY = {0: bool, 1: int64, 2: float32}


def get_default_dtype() -> dtype:
    return _DEFAULT_BY_CATEGORY[2]


def set_default_dtype(d: dtype) -> None:
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype needs a floating dtype, got {d}")
    _DEFAULT_BY_CATEGORY[2] = d


def as_dtype(d: Any) -> dtype:
    """A minitensor dtype from a minitensor dtype, a NumPy dtype or type, or a name like "float32"."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return _BY_NUMPY[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}; minitensor has "
                        f"{', '.join(sorted(_BY_NAME))}") from None


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"arrays of dtype {np_dtype} are not supported; minitensor has "
                        f"{', '.join(sorted(_BY_NAME))}") from None


def scalar_category(value: Any) -> builtins.int:
    """Category of a Python scalar: 0 bool, 1 int, 2 float."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return 0
    if isinstance(value, (builtins.int, np.integer)):
        return 1
    return 2


def promote_types(a: dtype, b: dtype) -> dtype:
    """The dtype two tensors of equal standing combine to (PyTorch's ``promote_types``)."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.itemsize == b.itemsize == 2 and a.category == 2:  # float16 with bfloat16: neither holds the other
        return float32
    return _BY_NUMPY[np.promote_types(a.np, b.np)]


def result_type(*operands: Any) -> dtype:
    """PyTorch's ``result_type`` over tensors and Python scalars (see the module docstring)."""
    from .tensor import Tensor

    best: list[dtype | None] = [None, None, None]  # by rank: dimensioned, zero-dim, scalar
    for x in operands:
        if isinstance(x, Tensor):
            d, rank = from_numpy_dtype(x.array.dtype), 0 if x.array.ndim else 1
        else:
            d, rank = _DEFAULT_BY_CATEGORY[scalar_category(x)], 2
        cur = best[rank]
        best[rank] = d if cur is None else promote_types(cur, d)
    category = max(d.category for d in best if d is not None)
    for b in best:
        if b is not None and b.category == category:
            return b
    raise AssertionError("unreachable")


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """Whether type promotion may cast ``from_`` to ``to`` (PyTorch's ``can_cast``): never a float to an
    integer or bool, nor a non-bool to bool; every other pair (narrowing included) may."""
    for name, d in (("from_", from_), ("to", to)):
        if not isinstance(d, dtype):
            position = 1 if name == "from_" else 2
            raise TypeError(f"can_cast(): argument '{name}' (position {position}) must be torch.dtype, "
                            f"not {type(d).__name__}")
    return not (from_.category > to.category and (from_.category == 2 or to.category == 0))
