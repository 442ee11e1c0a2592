"""Reductions over ``dim`` (None, an int or a tuple; negative allowed) with ``keepdim`` (the spreads, var and
std, are in ``moments.py``)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import return_types as rt
from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ._util import named, nondiff, norm_dim, norm_dims, to_float, torch_dtype_name
from .arithmetic import isnan
from ..tensor_shape import numpy_aliases
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO
from .sparse import sparse_sum

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin",
           "logsumexp", "all", "any", "norm"]
__all__ += ["nansum", "nanmean"]

def _keep(B: Backend, g: Any, axes: tuple[int, ...] | None, keepdims: bool, ndim: int) -> Any:
    """A reduced gradient with the reduced axes put back as size 1, so it broadcasts against x."""
    if keepdims or ndim == 0:
        return g
    return B.expand_dims(g, tuple(range(ndim)) if axes is None else axes)


def _kept_output(node: Any, saved: Any, y: Any, out_shape: tuple[int, ...]) -> Any:
    """For a double backward: the saved y (the output with its reduced dims kept) is the output."""
    from ..autograd.higher_order import kept_output
    return kept_output(node, saved, y, out_shape)


def _count(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> int:
    return math.prod(shape if axes is None else [shape[a] for a in axes])


class Sum(ArrayFunction):
    """The sum over ``axes``; the gradient spreads gy back over them."""
    mean = False  # Mean: the sum and its gradient divided by the count of the reduced elements
    axes: Any  # the reduced dims (None: all), set by forward

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: Any, keepdims: bool) -> Any:
        ctx.shape, ctx.axes, ctx.keepdims = x.shape, axes, keepdims
        if axes is not None:  # PyTorch's overloads: sum() is SumBackward0, sum(dim) SumBackward1 (mean alike)
            ctx.torch_name = "MeanBackward1" if ctx.mean else "SumBackward1"
        return B.mean(x, axes, keepdims) if ctx.mean else B.sum(x, axes, keepdims)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        g = _keep(B, gy, ctx.axes, ctx.keepdims, len(ctx.shape))
        if ctx.mean:
            g = g / _count(ctx.shape, ctx.axes)
        return B.broadcast_to(g, ctx.shape), None, None


class Mean(Sum):
    mean = True


class NanSum(ArrayFunction):
    """The sum over ``axes`` of the non-nan elements; the gradient is gy where x is not nan, 0 (times gy: an
    infinite gy gives nan there) where it is, as PyTorch's nansum_backward."""
    torch_name = "NansumBackward0"

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: Any, keepdims: bool) -> Any:
        ctx.axes, ctx.keepdims = axes, keepdims
        ctx.save_for_backward(x)
        return B.sum(B.where(B.isnan(x), 0, x), axes, keepdims)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_arrays
        with np.errstate(invalid="ignore"):
            return _keep(B, gy, ctx.axes, ctx.keepdims, x.ndim) * ~B.isnan(x), None, None


class Prod(ArrayFunction):
    """prod(x); dx_i = prod_{j != i} x_j. As PyTorch's prod_backward: without a zero it is y / x_i (so an
    inf makes NaN), with zeros the exclusive prefix and suffix products (exact), and for the whole tensor
    with two zeros or more simply 0."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axis: Any, keepdims: bool) -> Any:
        ctx.axis, ctx.keepdims = axis, keepdims
        y = B.prod(x, None if axis is None else (axis,), keepdims)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        if x.size and x.ndim and not getattr(B, "recording", False):  # (a recorded double backward keeps the
            # exclusive products: no branch on the data there)
            axes = None if ctx.axis is None else (ctx.axis,)
            zeros = int((x == 0).sum())
            if zeros == 0:
                with np.errstate(invalid="ignore", divide="ignore"):
                    return _keep(B, gy, axes, ctx.keepdims, x.ndim) * (_keep(B, y, axes, ctx.keepdims, x.ndim) / x), \
                        None, None
            if ctx.axis is None and zeros > 1:
                return B.zeros(x.shape, gy.dtype), None, None
        if x.size == 0:  # nothing to differentiate (the products below would pad an empty dim to one)
            return B.zeros(x.shape, gy.dtype), None, None
        flat = x.reshape(-1) if ctx.axis is None else B.moveaxis(x, ctx.axis, -1)
        if flat.shape[-1] == 0:  # an empty product: no element to get a gradient
            return B.zeros(x.shape, x.dtype), None, None
        ones = B.ones(flat.shape[:-1] + (1,), x.dtype)
        before = B.cumprod(B.concatenate([ones, flat[..., :-1]], -1), -1)
        after = B.flip(B.cumprod(B.flip(B.concatenate([flat[..., 1:], ones], -1), -1), -1), -1)
        others = before * after
        others = others.reshape(x.shape) if ctx.axis is None else B.moveaxis(others, -1, ctx.axis)
        axes = None if ctx.axis is None else (ctx.axis,)
        return _keep(B, gy, axes, ctx.keepdims, x.ndim) * others, None, None


class _Extreme(ArrayFunction):
    """amax/amin: the gradient is shared evenly between tied extremes (PyTorch's rule). A nan extreme
    matches no element, so its slice gets nan gradients, as PyTorch's amax; ``nan_ties`` (the full
    ``max()``/``min()``) counts the nans as the ties instead, so the gradient goes to them (PyTorch's
    evenly_distribute_backward)."""
    derived_saves = {1: _kept_output}
    op: str

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: Any, keepdims: bool, nan_ties: bool = False) -> Any:
        ctx.axes, ctx.keepdims, ctx.nan_ties = axes, keepdims, nan_ties
        y = getattr(B, ctx.op)(x, axes, True)
        ctx.save_for_backward(x, y)
        return y if keepdims or x.ndim == 0 else B.squeeze(y, axes)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        g = _keep(B, gy, ctx.axes, ctx.keepdims, x.ndim)
        if ctx.nan_ties:
            return evenly_distributed(B, g, x, y, ctx.axes), None, None, None
        return g * tie_shares(B, x, y, ctx.axes, False), None, None, None  # amax's: a nan gy reaches every x


def tie_shares(B: Backend, x: Any, y: Any, axes: tuple[int, ...] | None, nan_ties: bool) -> Any:
    """1/k at each of the k elements of x equal to the reduced value y (kept dims), 0 elsewhere: PyTorch's
    evenly_distribute_backward; ``nan_ties``: a nan y is shared by the nans of x."""
    hit = x == y
    if nan_ties:
        hit |= B.isnan(x) & B.isnan(y)
    return hit / B.sum(hit, axes, True).astype(x.dtype)


def evenly_distributed(B: Backend, g: Any, x: Any, y: Any, axes: tuple[int, ...] | None) -> Any:
    """PyTorch's evenly_distribute_backward (max(), min(), median() of a whole tensor): g / k at the k ties
    (nans tie with a nan y), and exactly 0 elsewhere, even where g is nan or inf (a where, not a product)."""
    share = tie_shares(B, x, y, axes, True)
    return B.where(share != 0, g * share, 0).astype(g.dtype, copy=False)


class Amax(_Extreme):
    op = "amax"


class Amin(_Extreme):
    op = "amin"


class ExtremeAlongDim(ArrayFunction):
    """max/min along one dim -> (values, indices); the gradient goes to the index taken only."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axis: int, keepdims: bool, op: str) -> Any:
        idx = getattr(B, op)(x, axis, True)
        y = B.take_along_axis(x, idx, axis)
        ctx.save_for_backward(idx)
        ctx.shape, ctx.axis, ctx.keepdims = x.shape, axis, keepdims
        if not keepdims:
            y, idx = B.squeeze(y, axis), B.squeeze(idx, axis)
        return y, idx.astype(np.int64, copy=False)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        idx, = ctx.saved_arrays
        g = _keep(B, gy, (ctx.axis,), ctx.keepdims, len(ctx.shape))
        out = B.zeros(ctx.shape, gy.dtype)
        return B.scatter_add_along_axis(out, idx, g, ctx.axis), None, None, None


class LogSumExp(ArrayFunction):
    """log(sum(exp(x))); dx = gy * exp(x - y) = gy * softmax(x)."""
    torch_name = "LogsumexpBackward0"  # PyTorch's grad_fn name
    derived_saves = {1: _kept_output}

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axes: Any, keepdims: bool) -> Any:
        y = B.logsumexp(x, axes, True)
        ctx.save_for_backward(x, y)
        ctx.axes, ctx.keepdims = axes, keepdims
        return y if keepdims or x.ndim == 0 else B.squeeze(y, axes)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        return _keep(B, gy, ctx.axes, ctx.keepdims, x.ndim) * B.exp(x - y), None, None


class PNorm(ArrayFunction):
    """(sum |x|^p)^(1/p); dx = sign(x) |x|^(p-1) gy / y^(p-1) (x gy / y for p = 2), taken as 0 where y = 0
    or x = 0 (PyTorch's subgradient: a zero input has a zero gradient, not nan)."""
    torch_name = "LinalgVectorNormBackward0"  # PyTorch's grad_fn name
    derived_saves = {1: _kept_output}

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, p: float, axes: Any, keepdims: bool) -> Any:
        if p == 2:
            y = B.sqrt(B.sum(x * x, axes, True))
        else:
            y = B.power(B.sum(B.power(B.abs(x), p), axes, True), 1.0 / p)
        ctx.save_for_backward(x, y)
        ctx.p, ctx.axes, ctx.keepdims = p, axes, keepdims
        return y if keepdims or x.ndim == 0 else B.squeeze(y, tuple(range(x.ndim)) if axes is None
                                                           else axes)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, y = ctx.saved_arrays
        return _keep(B, gy, ctx.axes, ctx.keepdims, x.ndim) * pnorm_grad(B, x, y, ctx.p), None, None, None


def pnorm_grad(B: Backend, x: Any, y: Any, p: float) -> Any:
    """d y / d x for y = ||x||_p (y with x's reduced dims kept): sign(x) |x|^(p-1) / y^(p-1), x / y for p = 2,
    taken as 0 where y = 0 or x = 0 (PNorm's and pdist's subgradient)."""
    safe = B.where(y == 0, 1, y)
    if p == 2:
        dx = x / safe
    else:
        ax = B.abs(x)
        dx = B.sign(x) * B.power(B.where(ax == 0, 1, ax) / safe, p - 1)
    return dx * (y != 0)


def _tensor_input(name: str, input: Any) -> None:
    """PyTorch's TypeError for a non-tensor input (``sum(1.0)``), instead of an AttributeError."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _float_reduction(name: str, input: Tensor, dtype: Any) -> Tensor:
    _tensor_input(name, input)
    if dtype is not None:
        return input.to(_dt.as_dtype(dtype))
    if input.array.dtype.kind not in "fV":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be a floating point "
                           f"dtype, got {input.dtype}; pass dtype= or convert with .float()")
    return input


@numpy_aliases  # axis=, keepdims=
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum over ``dim``; integer and bool inputs sum to int64 (as PyTorch)."""
    _tensor_input("sum", input)
    if type(input.array) is SparseCOO:  # a sparse COO tensor: torch.sparse.sum's kernel
        return sparse_sum(input, dim, dtype, keepdim)
    if dtype is not None:
        input = input.to(_dt.as_dtype(dtype))
    elif input.array.dtype.kind in "biu":
        input = input.to(_dt.int64)
    axes = norm_dims(dim, input.ndim)
    if input.array.dtype.kind not in "fV":
        return nondiff(lambda B, x: B.sum(x, axes, keepdim), input)
    return Sum.apply(input, axes, keepdim)


@numpy_aliases
def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return Mean.apply(_float_reduction("mean", input, dtype), norm_dims(dim, input.ndim), keepdim)


@numpy_aliases
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``sum`` with the nans taken as zero (integer inputs: ``sum``)."""
    _tensor_input("nansum", input)
    if input.array.dtype.kind not in "fV" or (dtype is not None and not _dt.as_dtype(dtype).is_floating_point):
        return sum(input, dim, keepdim, dtype=dtype)
    x = input if dtype is None else input.to(_dt.as_dtype(dtype))
    return NanSum.apply(x, norm_dims(dim, x.ndim), keepdim)


@numpy_aliases
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The mean of the non-nan elements over ``dim`` (nan where a slice has none); floating inputs only. As
    PyTorch: nansum divided by the count of non-nans."""
    _tensor_input("nanmean", input)
    if input.array.dtype.kind not in "fV":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{torch_dtype_name(input.dtype)}")
    count = sum(~isnan(input), dim, keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):  # a slice of nans only: 0 / 0 = nan is meant
        return nansum(input, dim, keepdim, dtype=dtype) / count


@numpy_aliases
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    _tensor_input("prod", input)
    axis = None if dim is None else norm_dim(dim, input.ndim)
    if input.array.dtype.kind not in "fV":
        # a 0-d tensor's dim 0 / -1 is the tensor itself (NumPy has no axis 0 there)
        axes = None if axis is None or not input.ndim else (axis,)
        return nondiff(lambda B, x: B.prod(x.astype(np.int64), axes, keepdim), input)
    return named(Prod.apply(input, axis if input.ndim else None, keepdim), "ProdBackward0" if dim is None else
                 "ProdBackward1")


def _check_reducible(name: str, input: Tensor, axes: tuple[int, ...] | None) -> None:
    """max, min, argmax... have no identity: PyTorch's errors for a reduction over a zero-size dim (an
    empty tensor may still be reduced over its other, non-empty dims)."""
    shape = input.array.shape
    if axes is None:
        if input.array.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return
    for a in axes:
        if shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _extreme(op: str, input: Tensor, dim: Any, keepdim: bool, name: str | None = None) -> Tensor:
    _tensor_input(name or op, input)
    axes = norm_dims(dim, input.ndim)
    _check_reducible(name or op, input, axes)
    if input.array.dtype.kind not in "fV":
        return nondiff(lambda B, x: (B.amax if op == "amax" else B.amin)(x, axes, keepdim), input)
    return (Amax if op == "amax" else Amin).apply(input, axes, keepdim, nan_ties=name is not None)


@numpy_aliases
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return _extreme("amax", input, dim, keepdim)


@numpy_aliases
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return _extreme("amin", input, dim, keepdim)


def _along(op: str, input: Tensor, dim: Any, keepdim: bool) -> Any:
    """max/min: the whole tensor's extreme without ``dim``, else (values, indices) along ``dim``;
    ``max(a, b)`` with a tensor ``b`` is the elementwise maximum, as PyTorch."""
    if isinstance(dim, Tensor):
        from .math import maximum, minimum
        return (maximum if op == "amax" else minimum)(input, dim)
    if dim is None:  # PyTorch's max() / min() nodes: MaxBackward1, MinBackward1
        return named(_extreme(op, input, None, False, name=op[1:]), op[1:].capitalize() + "Backward1")
    _tensor_input(op[1:], input)
    axis = norm_dim(dim, input.ndim)
    arg = "argmax" if op == "amax" else "argmin"
    if input.ndim:
        _check_reducible(op[1:], input, (axis,))
    result = rt.max if op == "amax" else rt.min
    if input.ndim == 0:
        return result((input, nondiff(lambda B, x: B.zeros((), np.int64), input)))
    if input.array.dtype.kind not in "fV":
        def along(B: Backend, x: Any) -> tuple[Any, Any]:
            idx = (B.argmax if arg == "argmax" else B.argmin)(x, axis, True)
            vals = B.take_along_axis(x, idx, axis)
            if not keepdim:
                vals, idx = B.squeeze(vals, axis), B.squeeze(idx, axis)
            return vals, idx.astype(np.int64, copy=False)
        return result(nondiff(along, input))
    values, indices = ExtremeAlongDim.apply(input, axis, keepdim, arg)
    return result((named(values, op[1:].capitalize() + "Backward0"), indices))  # max.dim's: MaxBackward0


@numpy_aliases
def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return _along("amax", input, dim, keepdim)


@numpy_aliases
def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return _along("amin", input, dim, keepdim)


def _arg(op: str, input: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    _tensor_input(op, input)
    if input.array.dtype.kind == "b":  # PyTorch has no bool kernel (max and min take bool)
        raise RuntimeError(f"{op}(): does not support bool input")
    _check_reducible(op, input, None if dim is None or not input.ndim else (norm_dim(dim, input.ndim),))

    def arg(B: Backend, x: Any) -> Any:
        find = B.argmax if op == "argmax" else B.argmin
        if dim is None:
            a = find(x.reshape(-1), 0, False)
            if keepdim:
                a = a.reshape((1,) * x.ndim)
        else:
            a = find(x, norm_dim(dim, x.ndim) if x.ndim else None, keepdim)
        return B.asarray(a).astype(np.int64, copy=False)
    return nondiff(arg, input)


@numpy_aliases
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum (of the flattened tensor when ``dim`` is None)."""
    return _arg("argmax", input, dim, keepdim)


@numpy_aliases
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg("argmin", input, dim, keepdim)


@numpy_aliases
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim``, stable for large x (shifted by the max)."""
    _tensor_input("logsumexp", input)
    x = to_float(input)
    return LogSumExp.apply(x, norm_dims(dim, x.ndim), keepdim)


@numpy_aliases
def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    _tensor_input("all", input)
    return nondiff(lambda B, x: B.all(x, norm_dims(dim, input.ndim), keepdim), input)


@numpy_aliases
def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    _tensor_input("any", input)
    return nondiff(lambda B, x: B.any(x, norm_dims(dim, input.ndim), keepdim), input)


@numpy_aliases
def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:
    """The vector p-norm over ``dim`` (all elements when None): p in "fro", 2, 1, inf, -inf, 0, or any
    number, as ``torch.norm``."""
    _tensor_input("norm", input)
    x = to_float(input)
    axes = norm_dims(dim, x.ndim)
    if p in ("fro", 2, 2.0):
        return PNorm.apply(x, 2, axes, keepdim)
    if p == 1:
        return sum(x.abs(), axes, keepdim)
    if p in (float("inf"), float("-inf")):  # a nan |x| takes the gradient, as PyTorch's vector_norm
        return _extreme("amax" if p > 0 else "amin", x.abs(), axes, keepdim, name="norm")
    if p == 0:
        return sum((x != 0).to(x.dtype), axes, keepdim)
    if isinstance(p, (int, float)):
        return PNorm.apply(x, float(p), axes, keepdim)
    raise ValueError(f"norm: unsupported p={p!r}; use 'fro', a number, inf or -inf")


