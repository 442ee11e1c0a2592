"""Writes and reads along a dim by an index tensor: ``scatter`` / ``scatter_add`` / ``scatter_reduce`` (the
inverse of ``gather``), ``take_along_dim``; and the data-dependent selections ``nonzero`` / ``argwhere`` /
``masked_select``.

scatter_reduce's gradients are PyTorch's: sum passes g (src: g gathered); mean divides by the count that
reached each place; prod is g * out / x (so an input of 0 gives nan, docs/differences.md); amax / amin share
g evenly among the elements equal to the result.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function
from ..backends.base import Backend
from ..tensor import Tensor
from ._util import as_operand, nondiff, norm_dim, out_of_range
from .indexing import gather, getitem
from .shape import broadcast_to

__all__ = ["scatter", "scatter_add", "scatter_reduce", "take_along_dim", "nonzero", "argwhere", "masked_select"]

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a reduction starts from when the input itself is left out (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


def _at(B: Backend, a: Any, index: Any, axis: int) -> Any:
    """a's entries at ``index`` along ``axis``; index may be smaller than a in the other axes (NumPy's
    take_along_axis would broadcast it instead)."""
    return B.take_along_axis(a[tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(index.shape))],
                             index, axis)


class Scatter(Function):
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, index: Any, src: Any, axis: int, reduce: str | None,
                include_self: bool) -> Any:
        ctx.axis, ctx.reduce, ctx.include_self = axis, reduce, include_self
        out = B.copy(x)
        if reduce is None:
            ctx.save_for_backward(index)
            return B.scatter_along_axis(out, index, src, axis, None)
        if not include_self:
            B.scatter_along_axis(out, index, _identity(reduce, x.dtype), axis, None)
        B.scatter_along_axis(out, index, src, axis, "sum" if reduce == "mean" else reduce)
        count = None
        if reduce in ("mean", "amax", "amin"):  # how many values reached each place (ties for amax / amin)
            mean = reduce == "mean"
            own = B.ones(x.shape, x.dtype) if mean else B.astype(x == out, x.dtype)
            if mean and not include_self:  # x counts only where nothing was scattered (for amax / amin PyTorch
                own = B.scatter_along_axis(own, index, 0, axis, None)  # counts an equal x all the same)
            hits = B.ones(index.shape, x.dtype) if mean else B.astype(src == _at(B, out, index, axis),
                                                                     x.dtype)
            count = B.scatter_add_along_axis(own, index, hits, axis)
        if reduce == "mean":
            out = out / count if out.dtype.kind == "f" else out // count
        ctx.save_for_backward(x, index, src, out, count)
        return out

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        axis, reduce = ctx.axis, ctx.reduce
        if reduce is None:
            index, = ctx.saved_tensors
            gx = B.scatter_along_axis(B.copy(g), index, 0, axis, None)  # overwritten places: no gradient
            gsrc = _at(B, g, index, axis) if ctx.needs_input_grad[2] else None
            return gx, None, gsrc, None, None, None
        x, index, src, out, count = ctx.saved_tensors
        if reduce == "sum":
            gx, gsrc = g, _at(B, g, index, axis)
        elif reduce == "mean":
            gx = g / count
            gsrc = _at(B, gx, index, axis)
        elif reduce == "prod":
            gx = g * out / x
            gsrc = _at(B, g * out, index, axis) / src
        else:
            share = g / count
            gx = share * (x == out)
            gsrc = _at(B, share, index, axis) * (src == _at(B, out, index, axis))
        if not ctx.include_self:  # x took no part where something was scattered
            gx = B.scatter_along_axis(B.copy(gx) if gx is g else gx, index, 0, axis, None)
        return gx, None, gsrc, None, None, None


def _check_index(name: str, input: Tensor, dim: int, index: Tensor, src: Any) -> int:
    if not isinstance(index, Tensor) or index.array.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    d = norm_dim(dim, input.ndim)
    if index.ndim != input.ndim or (isinstance(src, Tensor) and src.ndim != input.ndim):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    for k, n in enumerate(index.shape):
        if (k != d and n > input.shape[k]) or (isinstance(src, Tensor) and n > src.shape[k]):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} "
                               f"apart from dimension {d}" + (f" and to be no larger size than src "
                                                              f"{list(src.shape)}" if isinstance(src, Tensor) else ""))
    size = input.shape[d] if input.ndim else 1
    bad = out_of_range(index.array, 0, size)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return d


def _scatter(name: str, input: Tensor, dim: int, index: Tensor, src: Any, reduce: str | None,
             include_self: bool) -> Tensor:
    d = _check_index(name, input, dim, index, src)
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        if tuple(src.shape) != tuple(index.shape):  # only src's leading block, as PyTorch
            src = src[tuple(slice(0, n) for n in index.shape)]
    else:
        src = as_operand(src, input)
    return Scatter.apply(input, index, src, d, reduce, include_self)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *,
            reduce: str | None = None) -> Tensor:
    """out = input with out[index[i][j]][j] = src[i][j] (dim 0; so on), ``src`` a tensor or a number
    (``value``); ``reduce`` "add" or "multiply" combines instead of writing."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' (or 'value')")
    modes = {None: None, "add": "sum", "multiply": "prod"}
    if reduce not in modes:
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return _scatter("scatter", input, dim, index, src, modes[reduce], True)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """out = input with src added at index along dim (repeated indices accumulate)."""
    return _scatter("scatter_add", input, dim, index, src, "sum", True)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """out = input with src's values combined into each index place by ``reduce`` ("sum", "prod", "mean",
    "amax", "amin"), input's own value included unless ``include_self`` is False."""
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}")
    return _scatter("scatter_reduce", input, dim, index, src, reduce, include_self)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """input's entries at ``indices`` along ``dim`` (the flattened input when None); input and indices
    broadcast in the other dims (``gather`` with broadcasting, e.g. for argsort's result)."""
    if not isinstance(indices, Tensor) or indices.array.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    d = norm_dim(dim, input.ndim)
    shape = [max(a, b) for a, b in zip(input.shape, indices.shape)]
    for k, (a, b) in enumerate(zip(input.shape, indices.shape)):
        if k != d and a != b and 1 not in (a, b):
            raise RuntimeError(f"take_along_dim: shapes {tuple(input.shape)} and {tuple(indices.shape)} do not "
                               f"broadcast at dim {k}")
    return gather(broadcast_to(input, [n if k != d else input.shape[d] for k, n in enumerate(shape)]), d,
                  broadcast_to(indices, [n if k != d else indices.shape[d] for k, n in enumerate(shape)]))


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The indices of input's non-zero elements: (count, ndim) int64 in C order, or with ``as_tuple`` one
    1-D tensor per dim (a 0-d input counts as 1-D)."""
    if not as_tuple:
        return nondiff(lambda B, x: B.argwhere(x), input)
    return tuple(nonzero(input.reshape(-1) if input.ndim == 0 else input).unbind(1))


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: (count, ndim)."""
    return nonzero(input)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The 1-D tensor of input's elements where ``mask`` (bool) is True; input and mask broadcast."""
    if not isinstance(mask, Tensor) or mask.array.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {getattr(mask, 'dtype', mask)}")
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return getitem(broadcast_to(input, shape), broadcast_to(mask, shape)).reshape(-1)
