"""Rearranging elements: ``roll``, ``rot90``, ``repeat_interleave``, ``meshgrid``, ``cartesian_prod``,
``Tensor.unfold`` (sliding windows as a strided view) and ``as_strided``. Their gradients put each element's
gradient back where it came from."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

from ..autograd.function import ArrayFunction, ViewFunction
from ..autograd.views import AsStrided
from ..backends.base import Backend
from ..creation import arange
from ..tensor import Tensor
from ._util import nondiff, norm_dim
from .along_axis import index_select
from .shape import expand, flip, reshape, stack, transpose

__all__ = ["roll", "rot90", "repeat_interleave", "meshgrid", "cartesian_prod", "as_strided"]


class Roll(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Any:
        ctx.shifts, ctx.axes = shifts, axes
        return B.roll(x, shifts, axes)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.roll(gy, tuple(-s for s in ctx.shifts), ctx.axes), None, None


def _ints(v: Any) -> tuple[int, ...]:
    return (int(v),) if isinstance(v, int) else tuple(int(x) for x in v)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Elements shifted by ``shifts`` along ``dims``, wrapping around; no dims: over the flattened input."""
    s = _ints(shifts)
    if dims is None:
        if len(s) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:0")
        return reshape(Roll.apply(reshape(input, (-1,)), s, (0,)), tuple(input.shape))
    d = _ints(dims)
    if len(s) != len(d):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:{len(d)}")
    return Roll.apply(input, s, tuple(norm_dim(x, input.ndim) for x in d))


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """The planes ``dims`` rotated by k * 90 degrees, from the first dim towards the second."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = norm_dim(dims[0], input.ndim), norm_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, [d1]), d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return transpose(flip(input, [d0]), d0, d1)
    return input.clone()


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (each slice along ``dim``; of the flattened input when None) repeated ``repeats`` times
    (an int, or a tensor of one count per element). With input alone: input holds the counts and the result
    is arange(len(input)) repeated by them."""
    if repeats is None:
        return repeat_interleave(arange(input.shape[0], device=input.device), input, output_size=output_size)
    if dim is None:
        input, dim = reshape(input, (-1,)), 0
    d = norm_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.array.dtype.kind not in "iu" or repeats.ndim > 1:
            raise RuntimeError("repeat_interleave: repeats must be a 0-dim or 1-dim tensor of integers")
        if repeats.ndim == 1 and repeats.shape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0]} and input.size({d}) = {n}")
        negative = repeats.numel() and repeats.min().item() < 0
    else:
        negative = repeats < 0
    if negative:
        raise RuntimeError("repeats can not be negative")
    index = nondiff(lambda B, a, r: B.repeat(a, r, 0), arange(n, device=input.device), repeats)
    if output_size is not None and index.shape[0] != output_size:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the sum of repeats "
                           f"{index.shape[0]}")
    return index_select(input if input.ndim else reshape(input, (1,)), d, index)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors (views): with "ij" output k varies along dim k; with "xy" the
    first two dims are swapped (Cartesian order). PyTorch warns when ``indexing`` is left out ("ij")."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                      "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if not isinstance(t, Tensor) or t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{getattr(t, 'shape', t)}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: expects all tensors to have the same dtype")
    order = list(tensors)
    swap = indexing == "xy" and len(order) >= 2
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = [expand(reshape(t, tuple(-1 if i == k else 1 for i in range(len(order)))), shape)
             for k, t in enumerate(order)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """(N1 * ... * Nk, k): every tuple of one element from each 1-D tensor, the last varying fastest (a single
    tensor comes back as it is), as itertools.product; differentiable."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if not isinstance(t, Tensor) or t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(getattr(t, 'shape', ()))}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


class Unfold(ViewFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, axis: int, size: int, step: int) -> Any:
        ctx.n, ctx.axis, ctx.step = (x.shape[axis] if x.ndim else 1), axis, step
        return B.sliding_window(x if x.ndim else B.reshape(x, (1,)), size, step, axis)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.sliding_window_add(gy, ctx.n, ctx.step, ctx.axis), None, None, None


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``Tensor.unfold``: the windows of ``size`` along ``dimension`` every ``step``; that dim counts
    windows ((n - size) // step + 1) and a new last dim of ``size`` runs through each (a view)."""
    d = norm_dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    y = Unfold.apply(input, d, size, step)
    return reshape(y, (y.shape[-1],)) if input.ndim == 0 else y


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage: y[i] = storage[storage_offset + sum_k i_k * stride[k]] (strides and the
    offset in elements; the offset defaults to input's own). Differentiable: the gradient adds y's gradient
    at each storage place it read, then reads input's places (places y repeats add up), as PyTorch's."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for {len(size)} sizes")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return AsStrided.apply(input, size, stride, offset)
