"""Writes and reads along a dim by an index tensor: ``scatter`` / ``scatter_add`` / ``scatter_reduce`` (the
inverse of ``gather``), ``take_along_dim``; and the data-dependent selections ``nonzero`` / ``argwhere`` /
``masked_select``.

scatter_reduce's gradients are PyTorch's: sum passes g (src: g gathered); mean divides by the count that
reached each place; prod is g times the product of the other factors (zeros included); amax / amin share g
evenly among the elements equal to the result.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import ArrayFunction
from ..creation import arange
from ..backends.base import Backend
from ..tensor import Tensor, _counter
from ._util import as_operand, broadcast_error, broadcast_shapes_or_none, named, nondiff, norm_dim, \
    out_of_range, torch_dtype_name
from .cast import clone
from .along_axis import gather
from .indexing import getitem, setitem
from .shape import broadcast_to

__all__ = ["scatter", "scatter_add", "scatter_reduce", "take_along_dim", "nonzero", "argwhere", "masked_select",
           "index_add", "index_copy", "index_fill", "take", "put", "select_scatter", "slice_scatter", "masked_scatter"]
__all__ += ["index_put"]

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


def _reduce_into(B: Backend, x: Any, index: Any, src: Any, axis: int, reduce: str, include_self: bool) -> Any:
    """A copy of x with src combined into it at index by ``reduce`` (x's own values left out where
    something is scattered, unless ``include_self``); "mean" sums here."""
    out = B.copy(x)
    if not include_self:
        B.scatter_along_axis(out, index, _identity(reduce, x.dtype), axis, None)
    return B.scatter_along_axis(out, index, src, axis, "sum" if reduce == "mean" else reduce)


def _prod_grads(B: Backend, g: Any, x: Any, index: Any, src: Any, out: Any, axis: int,
                include_self: bool) -> tuple[Any, Any]:
    """scatter_reduce prod's gradients, PyTorch's way: the product of the other factors at each place, by
    out / factor where the factor is not 0, and recomputed with the factor as 1 where it is the place's
    only 0 (elsewhere out is 0 and so is the gradient)."""
    x1 = B.where(x == 0, 1, x)
    gx = g * _reduce_into(B, x1, index, src, axis, "prod", include_self) / x1
    zero = src == 0
    zeros_here = B.scatter_add_along_axis(B.zeros(x.shape, x.dtype), index, B.astype(zero, x.dtype), axis)
    single = zero & (_at(B, zeros_here, index, axis) == 1)
    others = _at(B, _reduce_into(B, x, index, B.where(single, 1, src), axis, "prod", include_self), index, axis)
    gsrc = B.where(single, _at(B, g, index, axis) * others, _at(B, g * out, index, axis) / B.where(zero, 1, src))
    return gx, gsrc


class Scatter(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, index: Any, src: Any, axis: int, reduce: str | None,
                include_self: bool) -> Any:
        ctx.axis, ctx.reduce, ctx.include_self = axis, reduce, include_self
        if reduce is None:
            ctx.save_for_backward(index)
            return B.scatter_along_axis(B.copy(x), index, src, axis, None)
        out = _reduce_into(B, x, index, src, axis, reduce, include_self)
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
            index, = ctx.saved_arrays
            gx = B.scatter_along_axis(B.copy(g), index, 0, axis, None)  # overwritten places: no gradient
            gsrc = _at(B, g, index, axis) if ctx.needs_input_grad[2] else None
            return gx, None, gsrc, None, None, None
        x, index, src, out, count = ctx.saved_arrays
        if reduce == "sum":
            gx, gsrc = g, _at(B, g, index, axis)
        elif reduce == "mean":
            gx = g / count
            gsrc = _at(B, gx, index, axis)
        elif reduce == "prod":
            gx, gsrc = _prod_grads(B, g, x, index, src, out, axis, ctx.include_self)
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
    out = _scatter("scatter", input, dim, index, src, modes[reduce], True)
    # PyTorch's node: scatter.src's ScatterBackward0, scatter.value's ScatterBackward1
    return out if reduce else named(out, "ScatterBackward0" if isinstance(src, Tensor) else "ScatterBackward1")


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """out = input with src added at index along dim (repeated indices accumulate)."""
    return named(_scatter("scatter_add", input, dim, index, src, "sum", True), "ScatterAddBackward0")


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
    broadcast in the other dims (``gather`` with broadcasting, e.g. for argsort's result). With a dim, gathers
    by a copy of indices, as PyTorch: a later write into indices neither raises nor moves the gradient."""
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
                  clone(broadcast_to(indices, [n if k != d else indices.shape[d] for k, n in enumerate(shape)])))


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
    shape = broadcast_shapes_or_none(input.shape, mask.shape)
    if shape is None:
        raise broadcast_error([tuple(mask.shape), tuple(input.shape)])
    return named(getitem(broadcast_to(input, shape), broadcast_to(mask, shape)).reshape(-1), "MaskedSelectBackward0")


def _along_dim(index: Tensor, d: int, shape: tuple[int, ...]) -> Tensor:
    """A 1-D index of places along dim d, expanded to ``shape`` (its length at d) for scatter."""
    return index.reshape(tuple(-1 if k == d else 1 for k in range(len(shape)))).expand(shape)


def _index_args(name: str, input: Tensor, dim: int, index: Tensor, source: Any) -> tuple[int, tuple[int, ...]]:
    """dim normalised, and the shape of what is written: source's, or input's with index's length at dim."""
    d = norm_dim(dim, input.ndim)
    if not isinstance(index, Tensor) or index.ndim > 1 or index.array.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected a 1-D (or 0-D) int64 index tensor")
    index = index.reshape(-1)
    shape = tuple(n if k != d else index.shape[0] for k, n in enumerate(input.shape))
    if isinstance(source, Tensor) and tuple(source.shape) != shape and input.ndim:
        raise RuntimeError(f"{name}(): source shape {list(source.shape)} must be {list(shape)} (input's with "
                           f"the index's length at dim {d})")
    return d, shape


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """input with alpha * source[..., i, ...] added at input[..., index[i], ...] along dim (repeats add up)."""
    d, shape = _index_args("index_add", input, dim, index, source)
    return scatter_add(input, d, _along_dim(index.long(), d, shape), source if alpha == 1 else source * alpha)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """input with input[..., index[i], ...] = source[..., i, ...] along dim."""
    d, shape = _index_args("index_copy", input, dim, index, source)
    return scatter(input, d, _along_dim(index.long(), d, shape), source)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """input with the slices index along dim set to ``value`` (a number or a 0-d tensor)."""
    if input.ndim == 0:  # a 0-d tensor is its own dim 0: fill its 1-element view
        return index_fill(input.reshape(1), norm_dim(dim, 0), index.reshape(-1), value).reshape(())
    d, shape = _index_args("index_fill", input, dim, index, None)
    n = input.shape[d] if input.ndim else 1
    bad = out_of_range(index.array, -n, n)  # unlike index_copy and index_add, PyTorch's index_fill wraps -n..-1
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    node = "IndexFillBackward1" if isinstance(value, Tensor) else "IndexFillBackward0"  # PyTorch's overloads
    value = value.to(input.dtype).expand(shape) if isinstance(value, Tensor) else value
    return named(scatter(input, d, _along_dim(index.long() % max(n, 1), d, shape), value), node)


class _SumCounter(list):
    """A version counter that reads as the sum of several (versions only grow: it changes when any does)."""

    def __init__(self, counters: list[list[int]]) -> None:
        super().__init__((0,))
        self.counters = counters

    def __getitem__(self, k: Any) -> Any:
        return sum(c[0] for c in self.counters)


def _standing_for(derived: Tensor, *indices: Tensor) -> Tensor:
    """``derived``, an index computed from ``indices``, with their version counter: an op that saves it raises
    at backward once one of them was written, as PyTorch's, which saves them (derived is private: no one
    writes into it)."""
    counters = [_counter(i) for i in indices]
    derived._vc = counters[0] if len(counters) == 1 else _SumCounter(counters)
    return derived


def _flat_index(name: str, input: Tensor, index: Tensor) -> Tensor:
    """index into the flattened input, negative counting from the end, checked as PyTorch's take."""
    n = input.numel()
    bad = out_of_range(index.array, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    return _standing_for((index % max(n, 1)).long().reshape(-1), index)


def take(input: Tensor, index: Tensor) -> Tensor:
    """input's elements at ``index`` into its flattened form (row-major), shaped as index."""
    return named(gather(input.reshape(-1), 0, _flat_index("take", input, index)).reshape(tuple(index.shape)),
                 "TakeBackward0")


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """input with its flattened elements at ``index`` set to (or with ``accumulate`` added) source's."""
    flat = input.reshape(-1)
    idx, src = _flat_index("put", input, index), source.reshape(-1)
    out = scatter_add(flat, 0, idx, src) if accumulate else scatter(flat, 0, idx, src)
    return out.reshape(tuple(input.shape))


def _index_put_args(input: Tensor, indices: Any, values: Any) -> tuple[Tensor, ...]:
    """indices as a tuple of index tensors, checked with PyTorch's errors."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(i).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{torch_dtype_name(input.dtype)} for the destination and "
                           f"{torch_dtype_name(values.dtype)} for the source.")
    if not indices:
        raise RuntimeError("index_put: indices must hold at least one index tensor")
    if len(indices) > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {len(indices)})")
    dim = 0
    for index in indices:  # PyTorch's message for an integer index out of its dim (a mask covers mask.ndim dims)
        if isinstance(index, Tensor) and index.array.dtype.kind in "iu" and dim < input.ndim:
            n = input.shape[dim]
            bad = out_of_range(index.array, -n, n)
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
        dim += index.ndim if isinstance(index, Tensor) and index.array.dtype == np.bool_ else 1
    return tuple(indices)


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """input with ``input[indices] = values`` (values broadcast to the indexed shape); with ``accumulate``,
    values add to input, repeated places summing. Gradients: input gets g (zero where written, unless
    ``accumulate``); values get g[indices] summed to values' shape."""
    index = _index_put_args(input, indices, values)
    if not accumulate:
        out = clone(input)
        setitem(out, index, values)
        return out
    # The flat places input[index] reads (getitem's rules: masks, int32, broadcasting), then put's scatter-add.
    places = _standing_for(getitem(arange(input.numel(), device=input.device).reshape(tuple(input.shape)), index),
                           *index)
    shape = tuple(places.shape)
    try:
        fits = np.broadcast_shapes(tuple(values.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(shape)}")
    return put(input, places, broadcast_to(values, shape), accumulate=True)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """input with input.select(dim, index) replaced by src."""
    d = norm_dim(dim, input.ndim)
    i = index + input.shape[d] if index < 0 else index
    return index_copy(input, d, as_operand([i], input).long(), src.unsqueeze(d))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """input with input[..., start:end:step, ...] (along dim) replaced by src."""
    d = norm_dim(dim, input.ndim)
    places = range(input.shape[d])[slice(start, end, step)]
    return index_copy(input, d, arange(places.start, places.stop, places.step, device=input.device), src)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """input (broadcast with mask) with the places where mask is True filled, in row-major order, from the
    first elements of source."""
    if not isinstance(mask, Tensor) or mask.array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_only supports boolean masks, but got mask with dtype "
                           f"{getattr(mask, 'dtype', type(mask).__name__)}")
    shape = broadcast_shapes_or_none(input.shape, mask.shape)
    if shape is None:
        raise broadcast_error([tuple(mask.shape), tuple(input.shape)])
    flat_mask = broadcast_to(mask, shape).reshape(-1)
    places = _standing_for(nonzero(flat_mask).reshape(-1), mask)
    if places.shape[0] > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    return scatter(broadcast_to(input, shape).reshape(-1), 0, places,
                   source.reshape(-1)[:places.shape[0]]).reshape(shape)
