"""PyTorch's indexing rules as a small NumPy model, written from PyTorch's documentation and its
``python_variable_indexing.cpp`` / ``TensorIndexing.h`` (not from minitensor's code):

1. The basic items apply first, left to right: an int selects (the dim goes), a slice slices, None inserts a
   dim of size 1, Ellipsis stands for the dims no item names, a Python bool inserts a dim of size 1 that is
   then indexed by [0] (True) or [] (False).
2. Index arrays are recorded at the dim of that view they stand at; a k-dim bool mask stands for k dims,
   indexed by its ``nonzero()`` columns.
3. All index arrays broadcast to one shape B. Where their dims are consecutive, B replaces them in place;
   otherwise B goes first, followed by the remaining dims in order.

The model returns, for each element of ``x[index]``, its flat position in x; values, setitem and both
gradients follow from those positions.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def _specified(items: tuple) -> int:
    n = 0
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, bool):
            continue
        a = np.asarray(it) if isinstance(it, (list, np.ndarray)) else None
        n += a.ndim if a is not None and a.dtype == bool else 1
    return n


def positions(shape: tuple[int, ...], index: Any) -> np.ndarray:
    """Flat positions in an array of ``shape`` of the elements PyTorch's ``x[index]`` picks."""
    v = np.arange(math.prod(shape)).reshape(shape)
    items = index if isinstance(index, tuple) else (index,)
    nd, specified = len(shape), _specified(items)
    dim, arrays = 0, []  # arrays: (dim of the view, integer array)
    for it in items:
        if it is None:
            v, dim = np.expand_dims(v, dim), dim + 1
        elif it is Ellipsis:
            dim += nd - specified
        elif isinstance(it, bool):
            v = np.expand_dims(v, dim)
            arrays.append((dim, np.zeros(int(it), dtype=np.int64)))
            dim += 1
        elif isinstance(it, int):
            v = np.take(v, it, axis=dim)
        elif isinstance(it, slice):
            v = v[(slice(None),) * dim + (it,)]
            dim += 1
        else:
            a = np.asarray(it)
            if a.dtype == bool:
                arrays += [(dim + j, col) for j, col in enumerate(np.nonzero(a))]
                dim += a.ndim
            else:
                arrays.append((dim, a))
                dim += 1
    if not arrays:
        return v
    dims = [d for d, _ in arrays]
    idx = np.broadcast_arrays(*[a for _, a in arrays])
    out = np.moveaxis(v, dims, range(len(dims)))[tuple(idx)]  # leading dims only: shape B + the rest
    if dims == list(range(dims[0], dims[0] + len(dims))):
        nb = idx[0].ndim
        out = np.moveaxis(out, range(nb), range(dims[0], dims[0] + nb))
    return out


def sum_to_shape(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The gradient of broadcasting an array of ``shape`` to ``g.shape`` (extra leading 1s allowed)."""
    g = g.reshape((1,) * (len(shape) - g.ndim) + g.shape)
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)
