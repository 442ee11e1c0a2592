"""Picking along one axis by an index tensor: ``gather`` (one element per index, take_along_axis) and
``index_select`` (whole slices); both save the index, so a write into it before backward raises."""
from __future__ import annotations

from typing import Any, Callable

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from ._util import norm_dim, out_of_range

__all__ = ["gather", "index_select"]


class _Take(ArrayFunction):
    """Picks elements of x along ``axis`` by ``index`` (``take``); the gradient scatter-adds gy back into
    zeros of x's shape (``add_back``), so repeated indices accumulate."""
    take: Callable[[Backend, Any, Any, int], Any]
    add_back: Callable[[Backend, Any, Any, Any, int], Any]  # (B, zeros, index, gy, axis)

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, index: Any, axis: int) -> Any:
        ctx.shape, ctx.axis = x.shape, axis
        ctx.save_for_backward(index)
        return ctx.take(B, x, index, axis)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        index, = ctx.saved_arrays
        return ctx.add_back(B, B.zeros(ctx.shape, gy.dtype), index, gy, ctx.axis), None, None


class IndexSelect(_Take):
    """x.take(index, axis): whole slices along axis."""
    take = staticmethod(lambda B, x, index, axis: B.take(x, index, axis))
    add_back = staticmethod(lambda B, out, index, gy, axis: B.index_add(out, (slice(None),) * axis + (index,), gy))


class Gather(_Take):
    """take_along_axis(x, index, axis): one element per position of index."""
    take = staticmethod(lambda B, x, index, axis: B.take_along_axis(x, index, axis))
    add_back = staticmethod(lambda B, out, index, gy, axis: B.scatter_add_along_axis(out, index, gy, axis))


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """out[i][j] = input[index[i][j]][j] for dim 0 (and so on): ``take_along_axis``. ``index`` may be smaller
    than ``input`` in the other dims, as PyTorch allows."""
    d = norm_dim(dim, input.ndim)
    if input.ndim == 0 and index.ndim == 0:  # a 0-d tensor is its own dim 0: gather from its 1-element view
        return gather(input.reshape(1), 0, index.reshape(1)).reshape(())
    if index.ndim != input.ndim:
        raise RuntimeError(f"gather: index tensor must have the same number of dimensions as input tensor "
                           f"({index.ndim} vs {input.ndim})")
    if index.array.dtype.kind not in "iu":
        raise RuntimeError(f"gather(): expected an integer index tensor, got {index.dtype}")
    for k, (i, n) in enumerate(zip(index.shape, input.shape)):
        if k != d and i > n:
            raise RuntimeError(f"gather: size of index {tuple(index.shape)} exceeds input {tuple(input.shape)} at "
                               f"dim {k}")
    n = input.shape[d] if input.ndim else 1
    bad = out_of_range(index.array, 0, n)
    if bad is not None:  # take_along_axis would wrap a negative index
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if any(i != n for k, (i, n) in enumerate(zip(index.shape, input.shape)) if k != d):
        input = input[tuple(slice(0, i) if k != d else slice(None) for k, i in enumerate(index.shape))]
    return Gather.apply(input, index, d)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    if index.ndim > 1 or index.array.dtype.kind not in "iu":
        raise RuntimeError(f"index_select(): index must be a 1-D integer tensor, got shape "
                           f"{tuple(index.shape)} and {index.dtype}")
    d = norm_dim(dim, input.ndim)
    if input.ndim == 0:  # PyTorch: one index into a 0-d tensor gives the 0-d tensor
        if index.numel() != 1:
            raise IndexError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
        return index_select(input.reshape(1), 0, index.reshape(1)).reshape(())
    if out_of_range(index.array, 0, input.shape[d] if input.ndim else 1) is not None:  # take wraps negatives
        raise IndexError("index out of range in self")
    return IndexSelect.apply(input, index, d)
