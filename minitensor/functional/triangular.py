"""Triangular parts and diagonals of matrices: ``tril`` and ``triu`` over the last two dims (batched);
``diagonal`` (a view), ``diag_embed`` (its inverse) and ``diag`` over any two dims."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd.function import ArrayFunction, ViewFunction
from ..backends.base import Backend
from ..tensor import Tensor

from ._util import norm_dim
from .indexing import where

__all__ = ["tril", "triu", "diagonal", "diag_embed", "diag", "diagonal_scatter"]


class _Triangle(ArrayFunction):
    """y = x where the element is on the kept side of diagonal ``k``, 0 elsewhere; gy takes the same
    mask, so the backward is the same op on gy."""
    op: Callable[[Backend, Any, int], Any]  # the backend's tril or triu

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, k: int) -> Any:
        ctx.k = k
        return ctx.op(B, x, k)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return ctx.op(B, gy, ctx.k), None


class Tril(_Triangle):
    op = staticmethod(lambda B, x, k: B.tril(x, k))


class Triu(_Triangle):
    op = staticmethod(lambda B, x, k: B.triu(x, k))


def _check(name: str, input: Tensor, diagonal: Any) -> int:
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions, got shape "
                           f"{tuple(input.shape)}")
    if isinstance(diagonal, bool) or not isinstance(diagonal, int):
        raise TypeError(f"{name}(): argument 'diagonal' must be int, not {type(diagonal).__name__}")
    return diagonal


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims: y[..., i, j] = x[..., i, j] where j - i <= diagonal,
    else 0 (diagonal > 0 keeps that many diagonals above the main one, < 0 drops some below)."""
    return Tril.apply(input, _check("tril", input, diagonal))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims: y[..., i, j] = x[..., i, j] where j - i >= diagonal,
    else 0."""
    return Triu.apply(input, _check("triu", input, diagonal))


class Diagonal(ViewFunction):
    """y = the diagonal ``offset`` of the planes (dim1, dim2) as a last dim; gx: gy put back on it."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, offset: int, d1: int, d2: int) -> Any:
        ctx.shape, ctx.args = x.shape, (offset, d1, d2)
        return B.diagonal(x, offset, d1, d2)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.diagonal_scatter(gy, ctx.shape, *ctx.args), None, None, None


class DiagEmbed(ArrayFunction):
    """y: zeros with x's last dim on the diagonal ``offset`` of the new planes (dim1, dim2); gx = that
    diagonal of gy."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, shape: tuple[int, ...], offset: int, d1: int, d2: int) -> Any:
        ctx.args = (offset, d1, d2)
        return B.diagonal_scatter(x, shape, offset, d1, d2)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return B.diagonal(gy, *ctx.args), None, None, None, None


def _dims(name: str, ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    d1, d2 = norm_dim(dim1, ndim), norm_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"{name}(): dim1 and dim2 cannot be identical, but got dim1 = {dim1} and dim2 = {dim2}")
    return d1, d2


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal ``offset`` (> 0 above the main one) of each (dim1, dim2) plane, as the last dim: a
    view."""
    d1, d2 = _dims("diagonal", input.ndim, dim1, dim2)
    return Diagonal.apply(input, offset, d1, d2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with input's last dim (length n) on their diagonal ``offset``: the planes (dim1, dim2) of
    the result are (n + |offset|) square, the other dims input's leading ones."""
    d1, d2 = _dims("diag_embed", input.ndim + 1, dim1, dim2)
    m = input.shape[-1] + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, m)
    return DiagEmbed.apply(input, tuple(shape), offset, d1, d2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input: the square matrix with it on diagonal ``diagonal``; a 2-D input: that diagonal (a
    copy)."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return Diagonal.apply(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """input with its diagonal ``offset`` of the planes (dim1, dim2) replaced by src (shaped as that
    diagonal)."""
    d1, d2 = _dims("diagonal_scatter", input.ndim, dim1, dim2)
    expected = tuple(Diagonal.apply(input.detach(), offset, d1, d2).shape)
    if tuple(src.shape) != expected:
        raise RuntimeError(f"diagonal_scatter: expected src to have a size equal to the diagonal of the input, "
                           f"{list(expected)}, but got {list(src.shape)}")
    shape = tuple(input.shape)
    on_diagonal = DiagEmbed.apply(src.detach().new_ones(expected).bool(), shape, offset, d1, d2)
    return where(on_diagonal, DiagEmbed.apply(src, shape, offset, d1, d2), input)


def fill_diagonal(input: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """``input`` with ``fill_value`` on its main diagonal (``input[i, i, ..., i]``; every dim of the same
    length past 2-D); ``wrap``: a tall matrix's diagonal restarts every ``width + 1`` rows, as NumPy's
    ``fill_diagonal``. Out of place: ``Tensor.fill_diagonal_`` writes it back."""
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    from ..creation import arange
    from .scatter import index_fill
    step = sum(int(np.prod(shape[k + 1:])) for k in range(len(shape)))  # the C strides of i, i, ..., i
    numel = int(np.prod(shape))
    # the diagonal's flat positions: min(height, width) of them, or every step through the matrix when wrapping
    end = numel if wrap and len(shape) == 2 else min(shape[0], shape[1]) * step
    where = arange(0, min(end, numel), step, device=input.device)
    return index_fill(input.reshape(-1), 0, where, fill_value).reshape(shape)
