"""var_mean and std_mean: a spread and the mean over the same dims in one call (PyTorch's tuples)."""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from ..tensor_shape import numpy_aliases
from .reduce import _tensor_input, mean, std, var

__all__ = ["var_mean", "std_mean"]


def _moments(name: str, spread: Any, input: Tensor, dim: Any, correction: float, keepdim: bool,
             unbiased: bool | None) -> tuple[Tensor, Tensor]:
    """(spread, mean) over ``dim`` for var_mean / std_mean: floating dtypes only, as PyTorch."""
    _tensor_input(name, input)
    if input.array.dtype.kind not in "fV":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    return spread(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased), mean(input, dim, keepdim)


@numpy_aliases
def var_mean(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
             unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    return _moments("var_mean", var, input, dim, correction, keepdim, unbiased)


@numpy_aliases
def std_mean(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
             unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    return _moments("std_mean", std, input, dim, correction, keepdim, unbiased)

