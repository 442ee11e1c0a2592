"""The spreads over ``dim``: var and std (``correction``), and var_mean / std_mean, a spread and the mean over
the same dims in one call (PyTorch's tuples)."""
from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from ..tensor_shape import numpy_aliases
from ._util import norm_dims
from .reduce import _count, _float_reduction, _keep, _tensor_input, mean

__all__ = ["var", "std", "var_mean", "std_mean"]


class Var(ArrayFunction):
    """sum((x - mean)^2) / (N - correction); dx = 2 (x - mean) gy / (N - correction)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: Any, correction: float, keepdims: bool) -> Any:
        ctx.axes, ctx.keepdims, ctx.correction = axes, keepdims, correction
        ctx.save_for_backward(x)
        return B.var(x, axes, correction, keepdims)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_arrays
        return _var_grad(ctx, B, x, gy), None, None, None


class Std(ArrayFunction):
    """sqrt(var); dx = dvar with gy / (2 std) for gy, taken as 0 where std = 0 (PyTorch), not inf * 0."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: Any, correction: float, keepdims: bool) -> Any:
        ctx.axes, ctx.keepdims, ctx.correction = axes, keepdims, correction
        y = B.sqrt(B.var(x, axes, correction, keepdims))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        g_var = gy / (2 * B.where(y == 0, 1, y)) * (y != 0)
        return _var_grad(ctx, B, x, g_var), None, None, None


def _var_grad(ctx: Any, B: Backend, x: Any, gy: Any) -> Any:
    """The gradient of var(x) over ctx.axes for the incoming (reduced) gradient gy."""
    centered = x - B.mean(x, ctx.axes, True)
    dof = _count(x.shape, ctx.axes) - ctx.correction
    scale = 2 / dof if dof > 0 else float("inf")  # no degrees of freedom left: inf/nan, as PyTorch
    return _keep(B, gy, ctx.axes, ctx.keepdims, x.ndim) * centered * x.dtype.type(scale)


def _correction(correction: float, unbiased: bool | None) -> float:
    return correction if unbiased is None else float(builtins.bool(unbiased))


def _spread(name: str, cls: Any, input: Tensor, dim: Any, correction: float, unbiased: bool | None,
            keepdim: bool) -> Tensor:
    """``cls`` (Var or Std) over ``dim``; PyTorch's warning when no degrees of freedom are left, that is
    when N - correction <= 0 for N = numel(input) // max(numel(output), 1)."""
    x = _float_reduction(name, input, None)
    axes, correction = norm_dims(dim, x.ndim), _correction(correction, unbiased)
    kept = math.prod(n for d, n in enumerate(x.shape) if axes is not None and d not in axes)
    if x.array.size // builtins.max(kept, 1) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return cls.apply(x, axes, correction, keepdim)


@numpy_aliases
def var(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
        unbiased: bool | None = None) -> Tensor:
    """sum((x - mean)^2) / (N - correction) over ``dim`` (correction=1: the unbiased estimate)."""
    return _spread("var", Var, input, dim, correction, unbiased, keepdim)


@numpy_aliases
def std(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
        unbiased: bool | None = None) -> Tensor:
    """sqrt(var(input)); its gradient is 0 where the std is 0 (constant input), as PyTorch."""
    return _spread("std", Std, input, dim, correction, unbiased, keepdim)


def _moments(name: str, spread: Any, input: Tensor, dim: Any, correction: float, keepdim: bool,
             unbiased: bool | None) -> tuple[Tensor, Tensor]:
    """(spread, mean) over ``dim`` for var_mean / std_mean: floating dtypes only, as PyTorch."""
    _tensor_input(name, input)
    if input.array.dtype.kind not in "fV":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    return (_spread(name, spread, input, dim, correction, unbiased, keepdim), _welford_mean(input, dim, keepdim))


def _welford_mean(input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """The mean as PyTorch's var_mean gets it, by Welford's update m += (x - m) / k: once m is +-inf the
    next element makes inf - inf, so an inf before a slice's last element (in the reduction's order) gives
    NaN; an inf only there gives inf, as the plain mean."""
    from .arithmetic import isinf
    from .indexing import where
    m = mean(input, dim, keepdim)
    if input.ndim == 0 or input.numel() == 0 or not bool(isinf(input.detach()).any()):
        return m
    dims = range(input.ndim) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    axes = sorted({d % input.ndim for d in dims})
    kept = [d for d in range(input.ndim) if d not in axes]
    x = input.detach().permute(*kept, *axes).reshape(*[input.shape[d] for d in kept], -1)
    early = isinf(x.narrow(-1, 0, x.shape[-1] - 1)).any(-1)
    return where(early.reshape(m.shape), float("nan"), m)


@numpy_aliases
def var_mean(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
             unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    return _moments("var_mean", Var, input, dim, correction, keepdim, unbiased)


@numpy_aliases
def std_mean(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
             unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    return _moments("std_mean", Std, input, dim, correction, keepdim, unbiased)

