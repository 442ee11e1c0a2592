"""``TensorShapeMethods``: the reduction and shape methods of ``Tensor`` (the base of ``TensorMethods``), each a
thin call into ``minitensor.functional``; ``_F`` is bound by ``tensor.py`` as for ``tensor_methods.py``."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

import numpy as np

if TYPE_CHECKING:
    from .tensor import Tensor

_F: Any = None  # minitensor.functional, bound by tensor.py
_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def sizes_of(args: tuple) -> tuple[int, ...]:
    """``f(2, 3)`` and ``f((2, 3))`` both give (2, 3), as PyTorch's size arguments do."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def numpy_aliases(fn: _Fn) -> _Fn:
    """Accept NumPy's spellings ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``, as PyTorch's
    reductions do (``x.sum(axis=0, keepdims=True)``)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for alias, name in (("axis", "dim"), ("keepdims", "keepdim")):
            if alias in kwargs:
                if name in kwargs:
                    raise TypeError(f"{fn.__name__}() got both '{name}' and its alias '{alias}'")
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


class TensorShapeMethods:
    """Reductions (sum, mean, max, ...) and shape methods (reshape, view, permute, tril, ...)."""

    __slots__ = ()
    array: Any
    if TYPE_CHECKING:
        @property
        def ndim(self) -> int: ...
        @property
        def T(self) -> Tensor: ...

    # ------------------------------------------------------------------------------ reductions
    @numpy_aliases
    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        return _F.sum(self, dim, keepdim, dtype=dtype)

    @numpy_aliases
    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        return _F.mean(self, dim, keepdim, dtype=dtype)

    @numpy_aliases
    def var(self, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
            unbiased: bool | None = None) -> "Tensor":
        return _F.var(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    @numpy_aliases
    def std(self, dim: Any = None, *, correction: float = 1, keepdim: bool = False,
            unbiased: bool | None = None) -> "Tensor":
        return _F.std(self, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)

    @numpy_aliases
    def prod(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        return _F.prod(self, dim, keepdim)

    @numpy_aliases
    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _F.max(self, dim, keepdim)

    @numpy_aliases
    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        return _F.min(self, dim, keepdim)

    @numpy_aliases
    def amax(self, dim: Any = (), keepdim: bool = False) -> "Tensor":
        return _F.amax(self, dim, keepdim)

    @numpy_aliases
    def amin(self, dim: Any = (), keepdim: bool = False) -> "Tensor":
        return _F.amin(self, dim, keepdim)

    @numpy_aliases
    def argmax(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        return _F.argmax(self, dim, keepdim)

    @numpy_aliases
    def argmin(self, dim: int | None = None, keepdim: bool = False) -> "Tensor":
        return _F.argmin(self, dim, keepdim)

    @numpy_aliases
    def logsumexp(self, dim: Any, keepdim: bool = False) -> "Tensor":
        return _F.logsumexp(self, dim, keepdim)

    @numpy_aliases
    def all(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return _F.all(self, dim, keepdim)

    @numpy_aliases
    def any(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return _F.any(self, dim, keepdim)

    @numpy_aliases
    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> "Tensor":
        return _F.norm(self, p, dim, keepdim, dtype)

    # ------------------------------------------------------------------ rearranging and scattering
    def roll(self, shifts: Any, dims: Any = None) -> "Tensor":
        return _F.roll(self, shifts, dims)

    def rot90(self, k: int = 1, dims: Sequence[int] = (0, 1)) -> "Tensor":
        return _F.rot90(self, k, dims)

    def repeat_interleave(self, repeats: Any = None, dim: int | None = None, *,
                          output_size: int | None = None) -> "Tensor":
        return _F.repeat_interleave(self, repeats, dim, output_size=output_size)

    def unfold(self, dimension: int, size: int, step: int) -> "Tensor":
        return _F.reorder.unfold(self, dimension, size, step)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> "Tensor":
        return _F.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0) -> "Tensor":
        return _F.diag(self, diagonal)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> "Tensor":
        return _F.diag_embed(self, offset, dim1, dim2)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return _F.nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> "Tensor":
        return _F.argwhere(self)

    def masked_select(self, mask: "Tensor") -> "Tensor":
        return _F.masked_select(self, mask)

    def take_along_dim(self, indices: "Tensor", dim: int | None = None) -> "Tensor":
        return _F.take_along_dim(self, indices, dim)

    def scatter(self, dim: int, index: "Tensor", src: Any = None, value: Any = None, *,
                reduce: str | None = None) -> "Tensor":
        return _F.scatter(self, dim, index, src, value, reduce=reduce)

    def scatter_(self, dim: int, index: "Tensor", src: Any = None, value: Any = None, *,
                 reduce: str | None = None) -> "Tensor":
        return _F.inplace(self, _F.scatter, dim, index, src, value, reduce=reduce)

    def scatter_add(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        return _F.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        return _F.inplace(self, _F.scatter_add, dim, index, src)

    def scatter_reduce(self, dim: int, index: "Tensor", src: "Tensor", reduce: str, *,
                       include_self: bool = True) -> "Tensor":
        return _F.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim: int, index: "Tensor", src: "Tensor", reduce: str, *,
                        include_self: bool = True) -> "Tensor":
        return _F.inplace(self, _F.scatter_reduce, dim, index, src, reduce, include_self=include_self)

    # ------------------------------------------------------------------- index writes and NumPy names
    def index_add(self, dim: int, index: "Tensor", source: "Tensor", *, alpha: Any = 1) -> "Tensor":
        return _F.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index: "Tensor", source: "Tensor", *, alpha: Any = 1) -> "Tensor":
        return _F.inplace(self, _F.index_add, dim, index, source, alpha=alpha)

    def index_copy(self, dim: int, index: "Tensor", source: "Tensor") -> "Tensor":
        return _F.index_copy(self, dim, index, source)

    def index_copy_(self, dim: int, index: "Tensor", source: "Tensor") -> "Tensor":
        return _F.inplace(self, _F.index_copy, dim, index, source)

    def index_fill(self, dim: int, index: "Tensor", value: Any) -> "Tensor":
        return _F.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index: "Tensor", value: Any) -> "Tensor":
        return _F.inplace(self, _F.index_fill, dim, index, value)

    def take(self, index: "Tensor") -> "Tensor":
        return _F.take(self, index)

    def put(self, index: "Tensor", source: "Tensor", accumulate: bool = False) -> "Tensor":
        return _F.put(self, index, source, accumulate)

    def put_(self, index: "Tensor", source: "Tensor", accumulate: bool = False) -> "Tensor":
        return _F.inplace(self, _F.put, index, source, accumulate)

    def masked_scatter(self, mask: "Tensor", source: "Tensor") -> "Tensor":
        return _F.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask: "Tensor", source: "Tensor") -> "Tensor":
        return _F.inplace(self, _F.masked_scatter, mask, source)

    def select_scatter(self, src: "Tensor", dim: int, index: int) -> "Tensor":
        return _F.select_scatter(self, src, dim, index)

    def slice_scatter(self, src: "Tensor", dim: int = 0, start: int | None = None, end: int | None = None,
                      step: int = 1) -> "Tensor":
        return _F.slice_scatter(self, src, dim, start, end, step)

    def diagonal_scatter(self, src: "Tensor", offset: int = 0, dim1: int = 0, dim2: int = 1) -> "Tensor":
        return _F.diagonal_scatter(self, src, offset, dim1, dim2)

    def select(self, dim: int, index: int) -> "Tensor":
        return _F.select(self, dim, index)

    def swapdims(self, dim0: int, dim1: int) -> "Tensor":
        return _F.swapdims(self, dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> "Tensor":
        return _F.moveaxis(self, source, destination)

    def tile(self, *dims: Any) -> "Tensor":
        return _F.tile(self, sizes_of(dims))

    def ravel(self) -> "Tensor":
        return _F.ravel(self)

    def flipud(self) -> "Tensor":
        return _F.flipud(self)

    def fliplr(self) -> "Tensor":
        return _F.fliplr(self)

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, sections: Any) -> tuple["Tensor", ...]:
        return _F.hsplit(self, sections)

    def vsplit(self, sections: Any) -> tuple["Tensor", ...]:
        return _F.vsplit(self, sections)

    def dsplit(self, sections: Any) -> tuple["Tensor", ...]:
        return _F.dsplit(self, sections)

    @numpy_aliases
    def cumsum(self, dim: int, *, dtype: Any = None) -> "Tensor":
        return _F.cumsum(self, dim, dtype=dtype)

    @numpy_aliases
    def cumprod(self, dim: int, *, dtype: Any = None) -> "Tensor":
        return _F.cumprod(self, dim, dtype=dtype)

    def cumsum_(self, dim: int, *, dtype: Any = None) -> "Tensor":
        return _F.inplace(self, _F.cumsum, dim, dtype=dtype)

    def cumprod_(self, dim: int, *, dtype: Any = None) -> "Tensor":
        return _F.inplace(self, _F.cumprod, dim, dtype=dtype)

    def cummax(self, dim: int) -> Any:
        return _F.cummax(self, dim)

    def cummin(self, dim: int) -> Any:
        return _F.cummin(self, dim)

    def logcumsumexp(self, dim: int) -> "Tensor":
        return _F.logcumsumexp(self, dim)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        return _F.sort(self, dim, descending, stable)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> "Tensor":
        return _F.argsort(self, dim, descending, stable)

    def msort(self) -> "Tensor":
        return _F.msort(self)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        return _F.topk(self, k, dim, largest, sorted)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
               dim: int | None = None) -> Any:
        return _F.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        return _F.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights: "Tensor | None" = None, minlength: int = 0) -> "Tensor":
        return _F.bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> "Tensor":
        return _F.histc(self, bins, min, max)

    def count_nonzero(self, dim: Any = None) -> "Tensor":
        return _F.count_nonzero(self, dim)
    def median(self, dim: int | None = None, keepdim: bool = False) -> Any:
        return _F.median(self, dim, keepdim)

    def nanmedian(self, dim: int | None = None, keepdim: bool = False) -> Any:
        return _F.nanmedian(self, dim, keepdim)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        return _F.kthvalue(self, k, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        return _F.mode(self, dim, keepdim)

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> "Tensor":
        return _F.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> "Tensor":
        return _F.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    # ----------------------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> "Tensor":
        return _F.reshape(self, sizes_of(shape))

    def view(self, *shape: Any, dtype: Any = None) -> "Tensor":
        """A view with a new shape, or, given a dtype, of the same bytes read as that dtype."""
        if dtype is None and len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, np.integer)):
            dtype = shape[0]
        if dtype is not None:
            return _F.view_dtype(self, dtype)
        return _F.reshape(self, sizes_of(shape))

    def view_as(self, other: "Tensor") -> "Tensor":
        return _F.reshape(self, other.shape)

    reshape_as = view_as

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        return _F.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> "Tensor":
        return _F.unflatten(self, dim, sizes)

    def squeeze(self, dim: Any = None) -> "Tensor":
        return _F.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> "Tensor":
        return _F.unsqueeze(self, dim)

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        return _F.transpose(self, dim0, dim1)

    def t(self) -> "Tensor":
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return _F._util.named(self.T, "TBackward0")  # PyTorch's node for t(); .T's is PermuteBackward0

    def permute(self, *dims: Any) -> "Tensor":
        return _F.permute(self, sizes_of(dims))

    def expand(self, *sizes: Any) -> "Tensor":
        return _F.expand(self, sizes_of(sizes))

    def expand_as(self, other: "Tensor") -> "Tensor":
        return _F.expand(self, other.shape)

    def broadcast_to(self, shape: Sequence[int]) -> "Tensor":
        return _F.broadcast_to(self, shape)

    def repeat(self, *sizes: Any) -> "Tensor":
        return _F.repeat(self, sizes_of(sizes))

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.split(self, split_size_or_sections, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple["Tensor", ...]:
        return _F.unbind(self, dim)

    def flip(self, *dims: Any) -> "Tensor":
        """``x.flip(0, 1)`` or ``x.flip((0, 1))``, as PyTorch's method (``minitensor.flip`` takes a sequence)."""
        if not dims:
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        return _F.flip(self, sizes_of(dims))

    def tril(self, diagonal: int = 0) -> "Tensor":
        return _F.tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> "Tensor":
        return _F.triu(self, diagonal)

    def tril_(self, diagonal: int = 0) -> "Tensor":
        return _F.inplace(self, _F.tril, diagonal)

    def triu_(self, diagonal: int = 0) -> "Tensor":
        return _F.inplace(self, _F.triu, diagonal)
