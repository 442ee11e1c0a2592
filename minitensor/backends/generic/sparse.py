"""Sparse COO arrays: the holder a sparse ``Tensor`` keeps in ``.array``, and the ops on it.

A ``SparseCOO`` is ``indices`` (sparse_dim, nnz) int64, ``values`` (nnz, *dense_shape) and ``shape``; an entry
may repeat (uncoalesced), and repeats add. The matrix product goes through SciPy's sparse matrices on the CPU
and ``cupyx.scipy.sparse`` on CUDA (the ``_sparse_module`` hook); the rest is written on ``xp``.

The holder is not an array: any dense op reaching it raises ``SparseLayoutError`` (NumPy's protocols, an
attribute it lacks), which ``Function.apply`` turns into PyTorch's NotImplementedError naming the op.
"""
from __future__ import annotations

import math
import sys
from typing import Any, Callable

Array = Any


class SparseLayoutError(NotImplementedError):
    """A dense op (``op``) reached a sparse COO array."""

    op = ""


def sparse_op_error(op: str, on_cuda: bool) -> SparseLayoutError:
    """PyTorch's error for an op without a sparse kernel."""
    error = SparseLayoutError(
        f"Could not run '{op}' with arguments from the 'Sparse{'CUDA' if on_cuda else 'CPU'}' backend: minitensor "
        "has no sparse COO (layout=minitensor.sparse_coo) version of it. Convert with .to_dense() first; sparse "
        "tensors support to_dense, coalesce, values/indices, +, -, * (scalar, dense, sparse), / and ** (scalar), "
        "neg, sum, t/transpose/permute, minitensor.sparse.mm (spmm, mm, @), clone and .to(device, dtype) "
        "(docs/sparse.md)")
    error.op = op
    return error


class SparseCOO:
    """``shape`` as a sparse COO array: ``values[k]`` at ``indices[:, k]``; ``coalesced``: indices sorted and
    unique. It has an array's ``shape``, ``ndim``, ``dtype``, ``size`` and ``itemsize``, and nothing else."""

    __slots__ = ("indices", "values", "shape", "coalesced")
    __array_priority__ = 1000  # NumPy defers binary operators to us, and we refuse them
    base = None  # never a view of another array (ViewFunction.apply asks)

    def __init__(self, indices: Array, values: Array, shape: tuple[int, ...], coalesced: bool) -> None:
        self.indices, self.values, self.shape, self.coalesced = indices, values, tuple(shape), coalesced

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    @property
    def itemsize(self) -> int:
        return int(self.values.itemsize)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[1])

    @property
    def sparse_dim(self) -> int:
        return int(self.indices.shape[0])

    @property
    def on_cuda(self) -> bool:
        return type(self.values).__module__.startswith("cupy")

    def map(self, f: Callable[[Array], Array]) -> "SparseCOO":
        """The same entries with ``f`` applied to the index and value arrays (a copy to a device, a cast)."""
        return SparseCOO(f(self.indices), f(self.values), self.shape, self.coalesced)

    def with_values(self, values: Array) -> "SparseCOO":
        return SparseCOO(self.indices, values, self.shape, self.coalesced)

    def __add__(self, other: Any) -> "SparseCOO":
        """The sum of two sparse arrays of one shape: both lists of entries (repeats add); the engine sums
        gradients that fan in this way."""
        if type(other) is not SparseCOO or other.shape != self.shape:
            raise sparse_op_error("add", self.on_cuda)
        xp = _array_module(self.values)
        return SparseCOO(xp.concatenate([self.indices, other.indices], 1),
                         xp.concatenate([self.values, other.values]), self.shape, False)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # Python's and NumPy's protocol probes (copy, pickle) see a plain object
            raise AttributeError(name)
        raise sparse_op_error(name, self.on_cuda)

    def astype(self, dtype: Any, copy: bool = True) -> "SparseCOO":
        """The values cast (the engine casts a gradient to its input's dtype this way)."""
        return self.with_values(self.values.astype(dtype, copy=copy))

    def __setitem__(self, index: Any, value: Any) -> None:
        raise sparse_op_error("setitem", self.on_cuda)

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise sparse_op_error("numpy", self.on_cuda)

    def __array_ufunc__(self, ufunc: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        raise sparse_op_error(ufunc.__name__, self.on_cuda)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise sparse_op_error(func.__name__, self.on_cuda)


def _array_module(a: Array) -> Any:
    """The (loaded) array module of ``a``: NumPy or CuPy. Only ``SparseCOO.__add__`` needs it, as the engine
    adds gradients without a backend at hand."""
    return sys.modules[type(a).__module__.partition(".")[0]]


class SparseOps:
    xp: Any
    index_add: Callable[..., Array]  # from ShapeOps: out[index] += src with repeats accumulating

    def _sparse_module(self) -> Any:
        """SciPy's sparse matrices (CUDA: ``cupyx.scipy.sparse``), imported on first use."""
        import scipy.sparse
        return scipy.sparse

    def _linear_index(self, indices: Array, shape: tuple[int, ...]) -> Array:
        """Each entry's position in the C-order flattening of ``shape`` (the sparse dims)."""
        lin = indices[0]
        for d in range(1, len(shape)):  # a loop over dims, not entries
            lin = lin * shape[d] + indices[d]
        return lin

    def sparse_coalesce(self, s: SparseCOO) -> SparseCOO:
        """The same array with indices sorted and unique, repeated entries summed."""
        if s.coalesced:
            return s
        xp, dims = self.xp, s.shape[:s.sparse_dim]
        unique, inverse = xp.unique(self._linear_index(s.indices, dims), return_inverse=True)
        values = xp.zeros((unique.shape[0],) + s.values.shape[1:], s.values.dtype)
        self.index_add(values, (inverse,), s.values)
        indices = xp.stack(xp.unravel_index(unique, dims)).astype(xp.int64)
        return SparseCOO(indices.reshape(len(dims), -1), values, s.shape, True)

    def sparse_to_dense(self, s: SparseCOO) -> Array:
        out = self.xp.zeros(s.shape, s.values.dtype)
        index = tuple(s.indices)
        if s.coalesced:
            out[index] = s.values
        else:  # repeated entries add
            self.index_add(out, index, s.values)
        return out

    def dense_to_sparse(self, a: Array, sparse_dim: int) -> SparseCOO:
        """The nonzero entries of ``a`` over its first ``sparse_dim`` dims (a row of the rest with any nonzero
        is kept whole), coalesced: ``nonzero`` lists them in C order."""
        xp = self.xp
        mask = a != 0
        if sparse_dim < a.ndim:
            mask = mask.any(axis=tuple(range(sparse_dim, a.ndim)))
        index = xp.nonzero(mask)
        indices = xp.stack(index).astype(xp.int64)
        return SparseCOO(indices.reshape(sparse_dim, -1), a[index], a.shape, True)

    def sparse_values_at(self, g: Any, indices: Array, shape: tuple[int, ...]) -> Array:
        """The entries of ``g`` (dense, or sparse of ``shape``) at ``indices``, zero where a sparse g has none:
        the gradient of an op for its sparse input's values."""
        if type(g) is not SparseCOO:
            return g[tuple(indices)]
        xp, dims = self.xp, shape[:indices.shape[0]]
        out_shape = (indices.shape[1],) + g.values.shape[1:]
        if g.nnz == 0:
            return xp.zeros(out_shape, g.values.dtype)
        g = self.sparse_coalesce(g)
        have, want = self._linear_index(g.indices, dims), self._linear_index(indices, dims)
        at = xp.minimum(xp.searchsorted(have, want), have.shape[0] - 1)
        hit = (have[at] == want).reshape((-1,) + (1,) * (len(out_shape) - 1))
        return xp.where(hit, g.values[at], xp.zeros((), g.values.dtype))

    def sparse_mm(self, s: SparseCOO, dense: Array, transpose: bool = False) -> Array:
        """s @ dense (``transpose``: s.T @ dense) for a 2-D ``s`` with scalar values: a CSR product (SciPy or
        cuSPARSE), which sums repeated entries."""
        row, col = s.indices
        shape = s.shape
        if transpose:
            row, col, shape = col, row, shape[::-1]
        matrix = self._sparse_module().coo_matrix((s.values, (row, col)), shape=shape).tocsr()
        return self.xp.ascontiguousarray(matrix @ dense)

    def sparse_mm_values_grad(self, indices: Array, gy: Array, dense: Array) -> Array:
        """d(sum(gy * (s @ dense)))/d s.values: gy[i] . dense[j] for each entry (i, j), (nnz,)."""
        row, col = indices
        return (gy[row] * dense[col]).sum(-1)

    def sparse_sum_rows(self, indices: Array, shape: tuple[int, ...], dims: tuple[int, ...],
                        keepdim: bool) -> tuple[Array, tuple[int, ...]]:
        """The index rows of each entry in the sum over ``dims`` of a sparse array of ``shape`` when some
        sparse dim stays (the kept rows; ``keepdim``: every row, 0 in the summed ones), and the sparse shape
        they index."""
        sd = indices.shape[0]
        if keepdim:
            zero = self.xp.zeros_like(indices[:1])
            rows = self.xp.concatenate([zero if d in dims else indices[d:d + 1] for d in range(sd)])
            return rows, tuple(1 if d in dims else shape[d] for d in range(sd))
        keep = [d for d in range(sd) if d not in dims]
        return indices[keep], tuple(shape[d] for d in keep)

    def sparse_sum(self, s: SparseCOO, dims: tuple[int, ...], keepdim: bool = False) -> Any:
        """s summed over ``dims``: its values over the dense dims among them, then the entries that meet over
        the sparse ones added (a coalesce of the rows kept); every sparse dim summed: a dense array."""
        sd = s.sparse_dim
        axes = tuple(d - sd + 1 for d in dims if d >= sd)
        values = s.values.sum(axis=axes, keepdims=keepdim) if axes else s.values
        if all(d in dims for d in range(sd)):
            out = values.sum(0)
            return out.reshape((1,) * sd + out.shape) if keepdim else out
        rows, sparse_shape = self.sparse_sum_rows(s.indices, s.shape, dims, keepdim)
        return self.sparse_coalesce(SparseCOO(rows, values, sparse_shape + values.shape[1:], False))

    # ------------------------------------------------------------------------------ arithmetic
    def sparse_cat(self, a: SparseCOO, b: SparseCOO, alpha: Any = 1) -> SparseCOO:
        """a + alpha * b as one list of both's entries (repeats add); coalesced when both are (PyTorch's)."""
        xp = self.xp
        vb = b.values if alpha == 1 else (b.values * alpha).astype(a.values.dtype, copy=False)
        out = SparseCOO(xp.concatenate([a.indices, b.indices], 1), xp.concatenate([a.values, vb]), a.shape, False)
        return self.sparse_coalesce(out) if a.coalesced and b.coalesced else out

    def sparse_add_dense(self, d: Array, s: SparseCOO, alpha: Any = 1) -> Array:
        """d + alpha * s, a new dense array (d has s's shape and dtype)."""
        out = self.xp.array(d, copy=True)
        v = s.values if alpha == 1 else (s.values * alpha).astype(out.dtype, copy=False)
        if s.coalesced:  # unique cells: a plain scatter
            out[tuple(s.indices)] += v
        else:
            self.index_add(out, tuple(s.indices), v)
        return out

    def sparse_match(self, a: SparseCOO, b: SparseCOO) -> tuple[Array, Array]:
        """The cells two coalesced arrays share: their positions ``ia`` in a and ``ib`` in b (a's order), by a
        binary search of a's linear indices in b's sorted ones."""
        xp, dims = self.xp, a.shape[:a.sparse_dim]
        la, lb = self._linear_index(a.indices, dims), self._linear_index(b.indices, dims)
        if la.shape[0] == 0 or lb.shape[0] == 0:
            empty = xp.zeros(0, xp.int64)
            return empty, empty
        at = xp.minimum(xp.searchsorted(lb, la), lb.shape[0] - 1)
        hit = lb[at] == la
        return xp.nonzero(hit)[0], at[hit]

    def sparse_permute(self, s: SparseCOO, axes: tuple[int, ...]) -> SparseCOO:
        """s with its dims permuted (sparse dims among themselves, dense among themselves): the index rows
        reordered and the values' dense axes transposed; sorted still only if the sparse dims stay."""
        sd = s.sparse_dim
        values = s.values.transpose((0,) + tuple(a - sd + 1 for a in axes[sd:]))
        return SparseCOO(s.indices[list(axes[:sd])], self.xp.ascontiguousarray(values),
                         tuple(s.shape[a] for a in axes), s.coalesced and tuple(axes[:sd]) == tuple(range(sd)))

    def sparse_spgemm(self, a: SparseCOO, b: SparseCOO) -> SparseCOO:
        """a @ b for 2-D sparse a (n, k) and b (k, m) with scalar values: a coalesced sparse (n, m), by a CSR
        product (SciPy or cuSPARSE) in canonical form (rows then columns sorted, no repeats)."""
        sp, xp = self._sparse_module(), self.xp
        ma = sp.coo_matrix((a.values, (a.indices[0], a.indices[1])), shape=a.shape).tocsr()
        mb = sp.coo_matrix((b.values, (b.indices[0], b.indices[1])), shape=b.shape).tocsr()
        c = (ma @ mb).tocsr()
        c.sum_duplicates()  # sorts the column indices of each row
        c = c.tocoo()
        indices = xp.stack([xp.asarray(c.row), xp.asarray(c.col)]).astype(xp.int64)
        return SparseCOO(indices.reshape(2, -1), xp.asarray(c.data).astype(a.values.dtype, copy=False),
                         (a.shape[0], b.shape[1]), True)

    def sparse_mm_pairs(self, a: SparseCOO, b: SparseCOO) -> tuple[Array, Array]:
        """The terms a[i, k] b[k, j] of a @ b (b coalesced: its entries sorted by row) as positions ``e`` in a
        and ``f`` in b: each entry of a paired with the entries of b in the row of its column. The pairs are
        laid out by a cumulative count and a binary search, so no loop runs over entries."""
        xp = self.xp
        rows, k = b.indices[0], a.indices[1]
        start = xp.searchsorted(rows, k, side="left")
        counts = xp.searchsorted(rows, k, side="right") - start
        ends = xp.cumsum(counts)
        n = int(ends[-1]) if ends.shape[0] else 0
        at = xp.arange(n)
        e = xp.searchsorted(ends, at, side="right")
        return e, start[e] + at - (ends - counts)[e]

    def sparse_spgemm_grads(self, a: SparseCOO, b: SparseCOO, g: Any) -> tuple[Array, Array]:
        """The gradients of the values of y = a @ b (a, b coalesced) from g (dense or sparse (n, m)):
        ga[e] = sum_j g[i, j] b[k, j], gb[f] = sum_i g[i, j] a[i, k], over the pairs of ``sparse_mm_pairs``."""
        xp = self.xp
        e, f = self.sparse_mm_pairs(a, b)
        cells = xp.stack([a.indices[0][e], b.indices[1][f]])
        gy = self.sparse_values_at(g, cells, (a.shape[0], b.shape[1]))
        ga = xp.zeros(a.values.shape, a.values.dtype)
        gb = xp.zeros(b.values.shape, b.values.dtype)
        self.index_add(ga, (e,), gy * b.values[f])
        self.index_add(gb, (f,), gy * a.values[e])
        return ga, gb
