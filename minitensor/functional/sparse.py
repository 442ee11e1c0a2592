"""Sparse COO tensors (``torch.sparse_coo_tensor``, ``torch.sparse.mm``): a ``Tensor`` whose ``.array`` is a
``SparseCOO`` holder (``backends/generic/sparse.py``). Dense ops refuse it with PyTorch's NotImplementedError
(``Function.apply``); the ops here take it. The gradient for a sparse input is sparse, on that input's own
entries (PyTorch's sparse gradient), and reaches the values it was built from. See docs/sparse.md.
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO
from ..tensor import Tensor, _wrap

__all__ = ["sparse_coo_tensor", "strided", "sparse_coo", "layout", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor",
           "sparse_compressed_tensor"]


class layout:
    """A memory layout, PyTorch's ``torch.layout``: ``minitensor.strided`` (dense) or ``minitensor.sparse_coo``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitensor.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickled by reference to the module attribute


strided = layout("strided")
sparse_coo = layout("sparse_coo")
# PyTorch's compressed layouts: named, so that code reading them runs, but no tensor has them.
sparse_csr, sparse_csc, sparse_bsr, sparse_bsc = (layout(f"sparse_{n}") for n in ("csr", "csc", "bsr", "bsc"))


def unsupported(name: str, what: str) -> NotImplementedError:
    """The error for a part of ``torch.sparse`` minitensor does not have (docs/differences.md)."""
    return NotImplementedError(f"{name}: minitensor does not support {what}; its sparse tensors are COO "
                               "(sparse_coo_tensor, to_sparse; docs/sparse.md)")


def _compressed_tensor(name: str) -> Any:
    def make(*args: Any, **kwargs: Any) -> Tensor:
        raise unsupported(name, "the compressed sparse layouts (CSR, CSC, BSR, BSC)")
    make.__name__ = make.__qualname__ = name
    return make


sparse_csr_tensor, sparse_csc_tensor, sparse_bsr_tensor, sparse_bsc_tensor, sparse_compressed_tensor = (
    _compressed_tensor(f"sparse_{n}_tensor") for n in ("csr", "csc", "bsr", "bsc", "compressed"))


def is_sparse(t: Tensor) -> bool:
    return type(t.array) is SparseCOO


def _entries_grad(ctx: Any, B: Backend, grad: Any) -> SparseCOO:
    """The gradient for a sparse input from ``grad`` (dense or sparse, of the input's shape): grad on the
    input's cells, one entry each (a repeated entry listed twice would count twice when summed)."""
    indices, = ctx.saved_arrays
    return SparseCOO(indices, B.sparse_values_at(grad, indices, ctx.shape), ctx.shape, True)


class _SparseFunction(ArrayFunction):
    """An op on a sparse input whose gradient is the output gradient on that input's cells (to_dense,
    coalesce, values, sum)."""
    accepts_sparse = True

    @staticmethod
    def keep_entries(ctx: Any, s: SparseCOO) -> None:
        """Keep the shape and indices of ``s`` (coalesced, for the ops whose gradient is on its cells)."""
        ctx.shape = s.shape
        ctx.save_for_backward(s.indices)


class SparseCooTensor(_SparseFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, indices: Any, values: Any, shape: tuple[int, ...], coalesced: bool) -> Any:
        s = SparseCOO(indices, values, shape, coalesced)
        _SparseFunction.keep_entries(ctx, s)
        return s

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        return None, _entries_grad(ctx, B, g).values


class ToDense(_SparseFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, s: SparseCOO) -> Any:
        s = B.sparse_coalesce(s)
        _SparseFunction.keep_entries(ctx, s)
        return B.sparse_to_dense(s)

    backward = staticmethod(_entries_grad)


class Coalesce(_SparseFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, s: SparseCOO) -> Any:
        s = B.sparse_coalesce(s)
        _SparseFunction.keep_entries(ctx, s)
        return s

    backward = staticmethod(_entries_grad)


class Values(_SparseFunction):
    """The values of a coalesced sparse tensor; the gradient is sparse on its entries."""

    @staticmethod
    def forward(ctx: Any, B: Backend, s: SparseCOO) -> Any:
        _SparseFunction.keep_entries(ctx, s)
        return s.values

    @staticmethod
    def backward(ctx: Any, B: Backend, gv: Any) -> Any:
        indices, = ctx.saved_arrays
        return SparseCOO(indices, gv, ctx.shape, True)


class ToSparse(ArrayFunction):
    """The nonzeros of a dense tensor; the gradient is the sparse gradient made dense."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, sparse_dim: int) -> Any:
        return B.dense_to_sparse(a, sparse_dim)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        return (B.sparse_to_dense(g) if type(g) is SparseCOO else g), None


class SparseSum(_SparseFunction):
    """The sum over ``dims`` (``B.sparse_sum``): dense when every sparse dim goes, else sparse; each entry's
    gradient is the output gradient where that entry went, spread over the dense dims summed."""

    @staticmethod
    def forward(ctx: Any, B: Backend, s: SparseCOO, dims: tuple[int, ...], keepdim: bool = False) -> Any:
        s = B.sparse_coalesce(s)
        _SparseFunction.keep_entries(ctx, s)
        ctx.dims, ctx.keepdim, ctx.values_shape = dims, keepdim, s.values.shape
        return B.sparse_sum(s, dims, keepdim)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        indices, = ctx.saved_arrays
        sd, dims, keepdim = indices.shape[0], ctx.dims, ctx.keepdim
        if all(d in dims for d in range(sd)):  # a dense output: one gradient for every entry
            values = g.reshape((1,) + g.shape[sd:] if keepdim else (1,) + g.shape)
        else:
            rows, sparse_shape = B.sparse_sum_rows(indices, ctx.shape, dims, keepdim)
            values = B.sparse_values_at(g, rows, sparse_shape + tuple(g.shape[len(sparse_shape):]))
        if not keepdim:  # the dense dims summed come back as 1s, to broadcast
            dense = [1 if d in dims else ctx.shape[d] for d in range(sd, len(ctx.shape))]
            values = values.reshape((values.shape[0], *dense))
        return SparseCOO(indices, B.broadcast_to(values, ctx.values_shape), ctx.shape, True), None, None


# ------------------------------------------------------------------------------------------- functions
def sparse_coo_tensor(indices: Any, values: Any, size: Sequence[int] | None = None, *, dtype: Any = None,
                      device: Any = None, requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> Tensor:
    """A sparse COO tensor: ``values[k]`` (nnz, *dense_shape) at ``indices[:, k]`` (sparse_dim, nnz), int64;
    ``size`` defaults to the smallest that holds the indices. Repeated indices add (coalesce() sums them).
    The indices are always checked against ``size`` (``check_invariants`` is accepted)."""
    from ..creation import as_tensor  # creation builds on Tensor, as this module does

    values = as_tensor(values, dtype=dtype, device=device)
    indices = as_tensor(indices, device=values.device)
    if indices.array.dtype.kind not in "iu":
        raise RuntimeError(f"indices must be an int64 tensor, got {indices.dtype}")
    indices = indices.long()
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    sparse_dim, nnz = indices.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values.shape[0] if values.ndim else 0}")
    if sparse_dim == 0:
        raise RuntimeError("indices must have at least one sparse dimension (sparse_dim >= 1)")
    lowest = indices.amin(1).tolist() if nnz else [0] * sparse_dim
    highest = indices.amax(1).tolist() if nnz else [-1] * sparse_dim
    if size is None:
        size = [h + 1 for h in highest] + list(values.shape[1:])
    size = tuple(builtins.int(n) for n in size)
    if len(size) != sparse_dim + values.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {values.ndim - 1}")
    if tuple(values.shape[1:]) != size[sparse_dim:]:
        raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[sparse_dim:]]}, got "
                           f"{list(values.shape)}")
    for d, (lo, hi) in enumerate(zip(lowest, highest)):
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                               f"index {hi}")
    out = SparseCooTensor.apply(indices, values, size, builtins.bool(is_coalesced))
    if requires_grad:
        out.requires_grad = True
    return out


def _require_sparse(input: Tensor, op: str) -> SparseCOO:
    s = input.array
    if type(s) is not SparseCOO:
        raise RuntimeError(f"{op} expected sparse coordinate tensor layout but got Strided")
    return s


def to_dense(input: Tensor) -> Tensor:
    return ToDense.apply(input) if is_sparse(input) else input


def to_sparse(input: Tensor, sparse_dim: int | None = None) -> Tensor:
    if is_sparse(input):
        return input
    sparse_dim = input.ndim if sparse_dim is None else sparse_dim
    if not 1 <= sparse_dim <= input.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [1,{input.ndim}] range, but "
                           f"{sparse_dim} is given")
    return ToSparse.apply(input, sparse_dim)


def coalesce(input: Tensor) -> Tensor:
    return input if _require_sparse(input, "coalesce").coalesced else Coalesce.apply(input)


def values(input: Tensor, raw: bool = False) -> Tensor:
    """``values()``: a coalesced tensor's values, differentiable; ``raw`` (``_values()``): the values as
    stored, coalesced or not, outside the graph."""
    if raw:
        return _wrap(_require_sparse(input, "_values").values, input.device)
    if not _require_sparse(input, "values").coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return Values.apply(input)


def sparse_sum(input: Tensor, dim: int | Sequence[int] | None = None, dtype: Any = None,
               keepdim: bool = False) -> Tensor:
    """The sum over ``dim`` (every dim, or every sparse one: a dense tensor; else a sparse tensor of the rest).
    Integer and bool values sum to int64, as PyTorch's."""
    _require_sparse(input, "sparse.sum")
    if dtype is not None:
        input = input.to(dtype)
    elif input.array.dtype.kind in "biu":
        input = input.long()
    if dim is None and not keepdim:
        return SparseSum.apply(input, tuple(range(input.ndim)))
    dims = range(input.ndim) if dim is None else [dim] if isinstance(dim, builtins.int) else dim
    wrapped = set()
    for d in dims:
        if not -input.ndim <= d < input.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                             f"{input.ndim - 1}], but got {d})")
        wrapped.add(d % input.ndim)
    return SparseSum.apply(input, tuple(sorted(wrapped)), keepdim)


def nnz(input: Tensor) -> int:
    s = input.array
    if type(s) is not SparseCOO:
        raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' backend: _nnz() "
                                  "needs a sparse tensor")
    return s.nnz


def indices(input: Tensor, check_coalesced: bool = True) -> Tensor:
    """The (sparse_dim, nnz) indices, without gradient."""
    s = _require_sparse(input, "indices")
    if check_coalesced and not s.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return _wrap(s.indices, input.device)


def sparse_repr(t: Tensor) -> str:
    s = t.array
    extras = "" if t.device.type == "cpu" else f", device='{t.device}'"
    if t.grad_fn is not None:
        extras += f", grad_fn={t.grad_fn!r}"
    elif t.requires_grad:
        extras += ", requires_grad=True"
    return (f"tensor(indices={_wrap(s.indices, t.device)!r},\n       values={_wrap(s.values, t.device)!r},\n"
            f"       size={tuple(s.shape)}, nnz={s.nnz}, layout=minitensor.sparse_coo{extras})")
