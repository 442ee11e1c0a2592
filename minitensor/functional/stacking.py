"""PyTorch's stacking, splitting and NumPy-style shape names, composed of the shape family's views and copies
(their gradients follow): hstack / vstack / dstack / column_stack, tensor_split / hsplit / vsplit / dsplit,
atleast_Nd, broadcast_tensors / broadcast_shapes, tile, ravel, flipud / fliplr, select, swapdims, moveaxis."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..tensor import Tensor
from ._util import broadcast_error, named, norm_dim, tensor_sequence
from .shape import cat, expand, flip, movedim, narrow, repeat, reshape, transpose

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
           "tensor_split", "hsplit", "vsplit", "dsplit", "broadcast_tensors", "broadcast_shapes", "tile", "ravel",
           "flipud", "fliplr", "select", "swapdims", "moveaxis"]


def _each(tensors: tuple, f: Any) -> Any:
    """f over the tensors (one list of them allowed): one tensor in, one out, as PyTorch's atleast_Nd."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(f(t) for t in tensors[0])
    return f(tensors[0]) if len(tensors) == 1 else tuple(f(t) for t in tensors)


def atleast_1d(*tensors: Any) -> Any:
    return _each(tensors, lambda t: reshape(t, (1,)) if t.ndim == 0 else t)


def atleast_2d(*tensors: Any) -> Any:
    return _each(tensors, lambda t: reshape(t, (1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t)


def atleast_3d(*tensors: Any) -> Any:
    """0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    shapes = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: (s[0], s[1], 1)}
    return _each(tensors, lambda t: reshape(t, shapes[t.ndim](tuple(t.shape))) if t.ndim < 3 else t)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 1 (dim 0 when all are 1-D), 0-d ones as 1-D."""
    ts = atleast_1d(tensor_sequence("hstack", tensors))
    return cat(ts, 0 if all(t.ndim == 1 for t in ts) else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 0 of the tensors made at least 2-D (a 1-D one is a row)."""
    return cat(atleast_2d(tensor_sequence("vstack", tensors)), 0)


def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    return vstack(tensor_sequence("row_stack", tensors))


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 2 of the tensors made at least 3-D."""
    return cat(atleast_3d(tensor_sequence("dstack", tensors)), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """cat along dim 1, 0-d and 1-D tensors as columns (n, 1)."""
    columns = tensor_sequence("column_stack", tensors)
    return cat([reshape(t, (t.numel(), 1)) if t.ndim < 2 else t for t in columns], 1)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views of input along dim: n sections (the first len % n one longer), or cut at the given indices."""
    d = norm_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        lengths = [size // n + (k < size % n) for k in range(n)]
        bounds = list(np.cumsum([0] + lengths))
    else:
        bounds = [0] + [min(max(int(i) + size * (int(i) < 0), 0), size) for i in indices_or_sections] + [size]
    return tuple(narrow(input, d, a, max(b - a, 0)) for a, b in zip(bounds[:-1], bounds[1:]))


def _split_along(name: str, input: Tensor, sections: Any, dim: int, need: int) -> tuple[Tensor, ...]:
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(sections, int) and input.shape[dim] % sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    return _split_along("hsplit", input, sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    return _split_along("vsplit", input, sections, 0, 2)


def dsplit(input: Tensor, sections: Any) -> tuple[Tensor, ...]:
    return _split_along("dsplit", input, sections, 2, 3)


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape all of ``shapes`` (ints count as 1-D shapes) broadcast to."""
    shapes = tuple((s,) if isinstance(s, int) else tuple(s) for s in shapes)
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise broadcast_error(shapes) from None


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded (views) to their common broadcast shape; one already of that shape is returned
    itself, as PyTorch's (code such as distributions' ``broadcast_all`` under ``no_grad`` relies on it)."""
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """input repeated ``dims`` times per dim, dims padded with leading 1s to input's rank (``repeat``)."""
    dims = tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def ravel(input: Tensor) -> Tensor:
    return reshape(input, (-1,))


def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` along dim, that dim removed (a view)."""
    d = norm_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return named(reshape(narrow(input, d, index % n, 1), tuple(input.shape[:d]) + tuple(input.shape[d + 1:])),
                 "SelectBackward0")


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose(input, dim0, dim1)


moveaxis = movedim
