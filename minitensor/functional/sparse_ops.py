"""The sparse COO versions of dense ops: ``+``, ``-``, ``*``, ``/``, ``**``, ``neg`` and ``permute`` (``t``,
``transpose``, ``.T``), as PyTorch's sparse kernels define them.

Each is registered in ``SPARSE_KERNELS`` under the dense op's Function: ``Function.apply`` runs it, with the
op's tensor arguments (after dtype promotion), when the dense forward refuses a sparse input, so the dense path
pays nothing. The ops on a sparse tensor's values (a scalar factor, an exponent, another operand's entries at
its cells) are written on the differentiable ``values()`` of the coalesced tensor and rebuilt into a sparse
tensor on its indices, so their gradients are the values' own; a coalesced tensor has each cell once, which
makes a cell's gradient that of its one entry.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import SPARSE_KERNELS, ArrayFunction
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO, sparse_op_error
from ..tensor import Tensor, _wrap
from .arithmetic import Add, Div, Mul, Neg, Pow, Sub
from .shape import Permute
from .sparse import Coalesce, SparseCooTensor, Values, is_sparse


def _sparse(x: Any) -> bool:
    return isinstance(x, Tensor) and is_sparse(x)


def _masked(B: Backend, g: Any, s: SparseCOO, scale: Any = 1) -> SparseCOO:
    """``scale * g`` on the cells of ``s`` (coalesced): the gradient for a sparse input (PyTorch's sparse_mask)."""
    c = B.sparse_coalesce(s)
    values = B.sparse_values_at(g, c.indices, s.shape)
    return c.with_values(values if scale == 1 else values * scale)


class SparseAdd(ArrayFunction):
    """a + alpha * b, both sparse of one shape: both's entries (``B.sparse_cat``); each input's gradient is
    the output's on its cells (times alpha for b)."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, a: SparseCOO, b: SparseCOO, alpha: Any = 1) -> Any:
        ctx.operands, ctx.alpha = (a, b), alpha  # on ctx: a sparse array is never written in place
        return B.sparse_cat(a, b, alpha)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        a, b = ctx.operands
        need_a, need_b = ctx.needs_input_grad[:2]
        return (_masked(B, g, a) if need_a else None), (_masked(B, g, b, ctx.alpha) if need_b else None), None


class DenseAddSparse(ArrayFunction):
    """d + alpha * s, d dense of s's shape: dense. dd = g; ds = alpha g on s's cells."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, d: Any, s: SparseCOO, alpha: Any = 1) -> Any:
        # s on ctx, not saved: a sparse array is never written in place (and ``d += s`` checks the saved
        # arrays against d's memory, which a sparse array has no part in)
        ctx.sparse, ctx.alpha = s, alpha
        return B.sparse_add_dense(d, s, alpha)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        return g, (_masked(B, g, ctx.sparse, ctx.alpha) if ctx.needs_input_grad[1] else None), None


class SparsePermute(ArrayFunction):
    """The dims of a sparse tensor permuted (``B.sparse_permute``); the gradient is permuted back."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, s: SparseCOO, axes: tuple[int, ...]) -> Any:
        ctx.inverse = tuple(int(i) for i in np.argsort(axes))
        return B.sparse_permute(s, axes)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        return (B.sparse_permute(g, ctx.inverse) if type(g) is SparseCOO else B.transpose(g, ctx.inverse)), None


# --------------------------------------------------------------------------------------------- kernels
def _rebuilt(s: Tensor, values: Tensor, indices: Any = None) -> Tensor:
    """A coalesced sparse tensor of ``s``'s shape: ``values`` at s's indices (or the given subset's)."""
    a = s.array
    index = _wrap(a.indices if indices is None else indices, s.device)
    return SparseCooTensor.apply(index, values, a.shape, True)


def _coalesced(s: Tensor) -> tuple[Tensor, Tensor]:
    """s coalesced, and its differentiable values."""
    c = s if s.array.coalesced else Coalesce.apply(s)
    return c, Values.apply(c)


def _add(input: Any, other: Any, alpha: Any = 1) -> Tensor:
    """dense + alpha * sparse: dense; sparse + alpha * sparse: sparse; sparse + dense: PyTorch's error."""
    if not _sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    shape = tuple(getattr(input, "shape", ()))
    if shape != tuple(other.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size {list(shape)} "
                           f"while other has size {list(other.shape)} (FYI: dense-sparse addition does not "
                           "currently support broadcasting)")
    if not _sparse(input):
        return DenseAddSparse.apply(input, other, alpha)
    if input.array.sparse_dim != other.array.sparse_dim:
        raise RuntimeError(f"add: expected sparse tensors with the same sparse_dim, got {input.array.sparse_dim} "
                           f"and {other.array.sparse_dim}")
    return SparseAdd.apply(input, other, alpha)


def _sub(input: Any, other: Any, alpha: Any = 1) -> Tensor:
    return _add(input, other, -alpha)


def _mul(input: Any, other: Any) -> Tensor:
    """sparse * scalar, * dense (broadcast to the sparse shape), * sparse (the cells both have): sparse."""
    if not _sparse(input):
        input, other = other, input  # the product commutes
    s, v = _coalesced(input)
    if _sparse(other):
        a, b = s.array, other.array
        if a.shape != b.shape or a.sparse_dim != b.sparse_dim:
            raise RuntimeError("mul: expects sparse inputs with equal dimensionality, number of sparse dimensions, "
                               f"and shape of sparse dimensions, got {list(a.shape)} ({a.sparse_dim} sparse) and "
                               f"{list(b.shape)} ({b.sparse_dim} sparse)")
        t, w = _coalesced(other)
        ia, ib = (_wrap(i, s.device) for i in s.device.backend.sparse_match(a, t.array))
        return _rebuilt(s, v[ia] * w[ib], s.array.indices[:, ia.array])
    if isinstance(other, Tensor) and other.ndim:
        if _broadcast_shape(other.shape, s.shape) != tuple(s.shape):
            raise NotImplementedError(f"mul: a dense operand of shape {list(other.shape)} that broadcasts the sparse "
                                      f"one of shape {list(s.shape)} to a larger shape is not supported")
        rows = tuple(_wrap(r, s.device) for r in s.array.indices)
        other = other.expand(*s.shape)[rows]  # (nnz, *dense_shape): the dense operand at each entry
    return _rebuilt(s, v * other)


def _broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        return ()


def _div(input: Any, other: Any) -> Tensor:
    """sparse / scalar (or a 0-d dense tensor): sparse; any other divisor is PyTorch's error."""
    if _sparse(other) or not _sparse(input) or (isinstance(other, Tensor) and other.ndim):
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                           f"{list(getattr(other, 'shape', ()))} for divisor)")
    s, v = _coalesced(input)
    return _rebuilt(s, v / other)


def _pow(input: Any, exponent: Any) -> Tensor:
    """sparse ** scalar (not 0: that would fill every cell): sparse, coalesced."""
    if not _sparse(input) or isinstance(exponent, Tensor):
        on_cuda = (input if isinstance(input, Tensor) else exponent).device.type == "cuda"
        raise sparse_op_error("pow.Tensor_Tensor" if isinstance(exponent, Tensor) else "pow.Scalar", on_cuda)
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                           "dense")
    s, v = _coalesced(input)
    return _rebuilt(s, v ** exponent)


def _neg(input: Tensor) -> Tensor:
    s, v = _coalesced(input)
    return _rebuilt(s, -v)


def _permute(input: Tensor, axes: tuple[int, ...]) -> Tensor:
    sd = input.array.sparse_dim
    if sorted(axes[:sd]) != list(range(sd)):
        raise RuntimeError(f"permute(sparse_coo): a sparse COO tensor's sparse dims (the first {sd}) can only be "
                           f"permuted among themselves and its dense dims among themselves, got dims {list(axes)}")
    return SparsePermute.apply(input, tuple(axes))


SPARSE_KERNELS.update({Add: _add, Sub: _sub, Mul: _mul, Div: _div, Pow: _pow, Neg: _neg, Permute: _permute})
