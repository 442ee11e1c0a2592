"""Cumulative ops along one dim (the reduce family's scans): cumsum, cumprod, cummax, cummin, logcumsumexp;
the trapezoid rule's integral and running integral (trapezoid, trapz, cumulative_trapezoid); and
``take_along``, the gather by computed indices that cummax/cummin and the sorts share."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from .. import return_types as rt
from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ..tensor_shape import numpy_aliases
from ._util import check_floating, named, nondiff, norm_dim
from .along_axis import Gather
from ..backends.base import Backend

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "trapezoid", "trapz", "cumulative_trapezoid"]
__all__ += ["diff"]

def _reverse_cumsum(B: Backend, g: Any, axis: int) -> Any:
    """sum over j >= i of g[j] along ``axis``: the gradient of cumsum."""
    return B.flip(B.cumsum(B.flip(g, axis), axis), axis)


class CumSum(ArrayFunction):
    torch_name = "CumsumBackward0"  # PyTorch's grad_fn name
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axis: int) -> Any:
        ctx.axis = axis
        return B.cumsum(x, axis)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return _reverse_cumsum(B, gy, ctx.axis), None


class _ScanSavingXY(ArrayFunction):
    """A scan (the backend method ``op``) whose backward reads both x and y."""
    op: str

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axis: int) -> Any:
        y = getattr(B, ctx.op)(x, axis)
        ctx.axis = axis
        ctx.save_for_backward(x, y)
        return y


class CumProd(_ScanSavingXY):
    """y_j = prod_{k <= j} x_k. dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k, exact with zeros (as
    PyTorch's cumprod_backward): before the first zero of a row that is revcumsum(g y)_i / x_i; at the first
    zero it is revcumsum(g y') with y' the cumprod of x with that zero taken as 1; after it, 0."""
    op = "cumprod"

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        axis = ctx.axis
        if x.shape[axis] == 1:  # y = x: the gradient passes (PyTorch's shortcut; the quotient is nan at +-inf)
            return gy, None
        zeros_seen = B.cumsum((x == 0).astype(np.int64), axis)
        before = zeros_seen == 0
        first_zero = (x == 0) & (zeros_seen == 1)
        grad = B.where(before, _reverse_cumsum(B, gy * y, axis) / B.where(before, x, 1), 0)  # not * before:
        # after a zero, an inf earlier in the row makes the sums NaN, and PyTorch's gradient there is 0
        if first_zero.any():
            y_skip = B.cumprod(B.where(first_zero, 1, x), axis)
            grad = B.where(first_zero, _reverse_cumsum(B, gy * y_skip, axis), grad)
        return grad, None


class LogCumSumExp(_ScanSavingXY):
    """y_j = log sum_{k <= j} exp(x_k); dx_i = sum_{j >= i} g_j exp(x_i - y_j), summed in log space for the
    positive and negative parts of g separately, so no exp overflows. The parts' missing terms are the
    dtype's lowest value, not -inf (PyTorch's choice): the same sums, and a double backward without the nan
    of -inf - -inf."""
    op = "logcumsumexp"

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        axis = ctx.axis
        grad = 0
        lowest = float(ml_dtypes.finfo(x.dtype).min)
        for sign in (1, -1):
            part = gy * sign
            log_part = B.where(part > 0, B.log(B.where(part > 0, part, 1)), lowest) - y
            reversed_sum = B.flip(B.logcumsumexp(B.flip(log_part, axis), axis), axis)
            grad = grad + sign * B.exp(x + reversed_sum)
        return grad, None


def take_along(input: Tensor, indices: Tensor, axis: int) -> Tensor:
    """input's values at ``indices`` along ``axis``: differentiable for floating inputs."""
    if input.array.dtype.kind in "fV":
        return Gather.apply(input, indices, axis)
    return nondiff(lambda B, x, i: B.take_along_axis(x, i, axis), input, indices)


def _scan_input(name: str, input: Tensor, dim: int, dtype: Any) -> tuple[Tensor, int]:
    """The input cast as cumsum/cumprod do (``dtype``, else integers and bools to int64) and dim as an axis
    (a 0-d tensor is scanned as one element)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    axis = norm_dim(dim, input.ndim)
    if dtype is not None:
        input = input.to(_dt.as_dtype(dtype))
    elif input.array.dtype.kind in "biu":
        input = input.to(_dt.int64)
    return input, axis


def _scan(fn: type[ArrayFunction], op: str, input: Tensor, axis: int) -> Tensor:
    """``fn`` along ``axis``; integer inputs take the backend's ``op`` without a graph."""
    if input.ndim == 0:
        return _scan(fn, op, input.reshape(1), 0).reshape(())
    if input.array.dtype.kind not in "fV":
        return nondiff(lambda B, x: getattr(B, op)(x, axis), input)
    return fn.apply(input, axis)


@numpy_aliases
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sums along ``dim``; integer and bool inputs give int64, as PyTorch."""
    x, axis = _scan_input("cumsum", input, dim, dtype)
    return _scan(CumSum, "cumsum", x, axis)


@numpy_aliases
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running products along ``dim``; the gradient is exact where the input has zeros."""
    x, axis = _scan_input("cumprod", input, dim, dtype)
    return _scan(CumProd, "cumprod", x, axis)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, stable; floating dtypes only, as PyTorch."""
    check_floating("logcumsumexp_out", input)
    x, axis = _scan_input("logcumsumexp", input, dim, None)
    return _scan(LogCumSumExp, "logcumsumexp", x, axis)


def _running(op: str, input: Tensor, dim: int) -> Any:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    axis = norm_dim(dim, input.ndim)
    x = input.reshape(1) if input.ndim == 0 else input
    indices = nondiff(lambda B, a: getattr(B, op)(a, axis)[1], x)
    values = take_along(x, indices, axis)
    if input.ndim == 0:
        values, indices = values.reshape(()), indices.reshape(())
    return (rt.cummax if op == "cummax" else rt.cummin)((named(values, op.capitalize() + "Backward0"), indices))


def cummax(input: Tensor, dim: int) -> Any:
    """(values, indices): the running maximum along ``dim`` and where it was taken (the latest position on
    ties; a nan is the maximum from where it appears), as PyTorch."""
    return _running("cummax", input, dim)


def cummin(input: Tensor, dim: int) -> Any:
    """(values, indices): the running minimum along ``dim``, as ``cummax``."""
    return _running("cummin", input, dim)


def _trapezoids(name: str, y: Tensor, x: Any, dx: Any, dim: int) -> tuple[Tensor, int]:
    """The areas (y[i] + y[i+1]) / 2 * (x[i+1] - x[i]) along ``dim`` (n - 1 of them; the spacing ``dx``, 1 by
    default, without ``x``; a 1-d x runs along dim, a longer one broadcasts with y) and the axis."""
    if not isinstance(y, Tensor):
        raise TypeError(f"{name}(): argument 'y' (position 1) must be Tensor, not {type(y).__name__}")
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        raise TypeError(f"{name}() received an invalid combination of arguments: give (Tensor y, Tensor x, *, "
                        "int dim) or (Tensor y, *, Number dx, int dim)")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = norm_dim(dim, y.ndim)
    n = y.shape[axis]
    if x is not None and x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = x.reshape([n if i == axis else 1 for i in range(y.ndim)])
    if n == 0:  # no interval: the integral is 0 (an empty running integral)
        y = y.narrow(axis, 0, 0)
        return (y if y.is_floating_point() else y.to(_dt.get_default_dtype())), axis
    mid = (y.narrow(axis, 1, n - 1) + y.narrow(axis, 0, n - 1)) / 2
    if x is None:
        return mid * (1 if dx is None else dx), axis
    x_axis = axis - (y.ndim - x.ndim)
    if x_axis < 0:
        raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    m = x.shape[x_axis]
    return mid * (x.narrow(x_axis, 1, m - 1) - x.narrow(x_axis, 0, m - 1)), axis


def _integral(name: str, y: Tensor, x: Tensor | None, dx: Any, dim: int) -> Tensor:
    """sum of the trapezoids; with a spacing (no ``x``) as PyTorch sums it, (sum y - (y[0] + y[-1]) / 2) dx,
    so an inf at an end makes inf - inf = NaN there as in PyTorch (not the areas' inf)."""
    areas, axis = _trapezoids(name, y, x, dx, dim)
    if x is not None or y.shape[axis] == 0:
        return areas.sum(axis)
    f = y if y.is_floating_point() else y.to(areas.dtype)
    ends = f.select(axis, 0) + f.select(axis, -1)
    return (f.sum(axis) - ends * 0.5) * (1 if dx is None else dx)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The trapezoid rule's integral of ``y`` along ``dim``: sum_i (y[i] + y[i+1]) / 2 (x[i+1] - x[i]), with
    ``x`` the sample points or ``dx`` their spacing (1 by default); 0 over fewer than two points."""
    return _integral("trapezoid", y, x, dx, dim)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid``'s older name."""
    return _integral("trapz", y, x, dx, dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running trapezoid integral along ``dim``: n - 1 values, the k-th the integral over the first k + 1
    intervals."""
    areas, axis = _trapezoids("cumulative_trapezoid", y, x, dx, dim)
    return areas.cumsum(axis)
def _diff_operand(what: str, t: Any, input: Tensor, axis: int) -> Tensor:
    """``prepend`` / ``append`` checked against input: a tensor of input's dims, its sizes off ``axis``."""
    if not isinstance(t, Tensor):
        raise TypeError(f"diff(): argument '{what}' must be Tensor, not {type(t).__name__}")
    if t.ndim != input.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for k, (a, b) in enumerate(zip(input.shape, t.shape)):
        if k != axis and a != b:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                               f"except along the differencing dimension; input.size({k}) = {a}, but got "
                               f"tensor.size({k}) = {b}")
    return t


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along ``dim``, out[i] = x[i + 1] - x[i] applied n times (logical xor for
    bool), of input with ``prepend`` and ``append`` joined to it along ``dim``; the dim shrinks by n (to 0)."""
    from .arithmetic import logical_xor, sub
    from .shape import cat, narrow
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"diff(): argument 'n' must be int, not {type(n).__name__}")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    axis = norm_dim(dim, input.ndim)
    if n == 0:  # PyTorch returns a copy of input, without prepend and append
        return input.clone()
    parts = [_diff_operand("prepend", prepend, input, axis)] if prepend is not None else []
    parts += [input] + ([_diff_operand("append", append, input, axis)] if append is not None else [])
    x = cat(parts, axis) if len(parts) > 1 else input
    step = logical_xor if x.dtype is _dt.bool else sub
    for _ in range(min(int(n), x.shape[axis])):  # one whole-tensor step per order
        length = x.shape[axis] - 1
        x = step(narrow(x, axis, 1, length), narrow(x, axis, 0, length))
    return x


CumProd.torch_name, LogCumSumExp.torch_name = "CumprodBackward0", "LogcumsumexpBackward0"  # PyTorch's spelling
