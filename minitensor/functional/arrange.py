"""Tensors built by arranging others, composed of the shape, products and scan families' ops (so
differentiable where those are): ``t``, ``split_with_sizes``, ``diagflat``, ``addr``, ``unravel_index``,
``combinations``, ``vander`` (and ``linalg.vander``),
``index_reduce`` (``scatter_reduce`` with the index spread over source's shape)."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

from .. import dtypes as _dt
from ..tensor import Tensor
from .products import _fused, outer
from .reorder import meshgrid
from .scatter import scatter_reduce
from .shape import cat, split, stack
from .triangular import diag

__all__ = ["addr", "combinations", "diagflat", "index_reduce", "split_with_sizes", "t", "unravel_index", "vander"]


def t(input: Tensor) -> Tensor:
    """The transpose of a matrix; vectors and scalars as they are."""
    return input.t()


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """``split`` with a list of sizes that must sum to ``input.shape[dim]``."""
    if isinstance(split_sizes, int) or not isinstance(split_sizes, Sequence):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' must be tuple of ints, not "
                        f"{type(split_sizes).__name__}")
    return split(input, list(split_sizes), dim)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on diagonal ``offset``."""
    return diag(input.reshape(-1), offset)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2), vec1 (n,), vec2 (m,); input broadcasts to (n, m)."""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    return _fused("addr", input, outer(vec1, vec2), beta, alpha)


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat ``indices`` in a tensor of ``shape``: one int64 tensor of indices' shape per
    dim, (index // stride) % size (so indices wrap around, negative ones from the end, as PyTorch)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.is_floating_point() or indices.dtype.name == "bool":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(map(operator.index, shape))
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    sizes, steps = (indices.new_tensor(v).long() for v in (list(shape), strides))
    coords = indices.long().unsqueeze(-1) // steps % sizes
    return tuple(coords.unbind(-1))


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the 1-D ``input``'s elements, (C, r), in lexicographic order of
    positions (``itertools.combinations``, or ``combinations_with_replacement``); r == 0 gives an empty 1-D."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    # positions as int64 (new_tensor alone would take input's dtype: bool positions are 0, 1, 1...)
    grids = meshgrid(*[input.new_tensor(range(input.shape[0]), dtype=_dt.int64)] * r, indexing="ij")
    keep = grids[0] == grids[0]
    for a, b in zip(grids, grids[1:]):  # positions rising (or not falling) left to right
        keep = keep & ((a <= b) if with_replacement else (a < b))
    return stack([input[g[keep]] for g in grids], 1)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix (n, N): column j is x**(N - 1 - j) (``increasing``: x**j), built by a
    cumulative product so the gradient at x == 0 is finite, as PyTorch's."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    x = x if x.is_floating_point() else x.long()  # PyTorch's integer result is int64
    if N == 0:
        return x.new_empty(x.shape[0], 0)
    powers = cat([x.new_ones(x.shape[0], 1), x.unsqueeze(1).expand(x.shape[0], N - 1)], 1).cumprod(1)
    return powers if increasing else powers.flip(1)


def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """``linalg.vander``: (*, n) -> (*, n, N), [..., i, j] = x[..., i]**j (N defaults to n and must exceed 1;
    a 0-d x is one point), built as ``vander`` is; integer dtypes keep theirs, bool is refused (PyTorch's)."""
    if x.dtype is _dt.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    x = x.unsqueeze(-1) if x.dim() == 0 else x
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return cat([x.new_ones(*x.shape, 1), x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)], -1)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """out[..., index[i], ...] = reduce(input[..., index[i], ...] (with ``include_self``), source[..., i, ...]
    over every i naming it), reduce one of prod, mean, amax, amin; rows no index names keep input's values."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    if source.dim() != input.dim() or (input.dim() and index.numel() != source.shape[dim]):
        raise IndexError(f"index_reduce_(): source and self must have the same number of dimensions and "
                         f"index must have one entry per source slice along dim {dim}, got shapes "
                         f"{list(source.shape)}, {list(input.shape)} and {index.numel()} indices")
    d = dim % max(input.dim(), 1)
    spread = [1] * source.dim()
    spread[d] = -1 if source.dim() else 1
    return scatter_reduce(input, d, index.reshape(spread).expand(source.shape), source, reduce,
                          include_self=include_self)
