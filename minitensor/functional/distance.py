"""Distances between vectors: cosine_similarity, pairwise_distance, pdist (``torch.nn.functional``'s names,
also ``minitensor.*``) and cdist (the p-norm distance between each pair of rows of two batches of row
vectors, on the linalg and reduce families' backend methods). cosine_similarity and pairwise_distance
compose the reductions' norms, so their gradients are PyTorch's; pdist has a Function of its own for
PyTorch's per-pair gradient (no split of tied maxima, a zero gradient for p = 0)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..amp.autocast_mode import cast_early
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import triu_indices
from ..tensor import Tensor
from ._util import ClampMinValue, broadcast_error, cast, norm_dim, torch_dtype_name
from .reduce import norm, pnorm_grad
from .stacking import broadcast_tensors

__all__ = ["cosine_similarity", "pairwise_distance", "pdist", "cdist"]  # (dist: torch.dist only, no F.dist)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum over ``dim`` of (x1 / max(||x1||, eps)) (x2 / max(||x2||, eps)): x1 and x2 broadcast, ``dim``
    counts in the broadcast shape and is dropped. The eps floor takes no part in the gradient, as in PyTorch
    (which clamps the norms in place under no_grad); integer operands take the floating common dtype."""
    common = _dt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{torch_dtype_name(common)}")
    x1, x2 = broadcast_tensors(*(x if x.is_floating_point() else cast(x, common) for x in (x1, x2)))
    d = norm_dim(dim, x1.ndim)
    n1, n2 = (ClampMinValue.apply(norm(x, 2, d, keepdim=True), lo=float(eps)) for x in (x1, x2))
    return (x1 / n1 * (x2 / n2)).sum(d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim of the broadcast shape (kept with ``keepdim``), torch.norm's p
    (inf, -inf and 0 too); eps keeps the gradient finite where x1 == x2."""
    return norm(x1 - x2 + eps, p, max(x1.ndim, x2.ndim) - 1, keepdim)


class PDist(ArrayFunction):
    """The p-norm of each row of ``d`` (P, M), the differences of pdist's pairs, with PyTorch's pdist
    gradient: PNorm's (0 where a distance is 0) for finite p > 0, sign(d) at every entry that attains the
    max for p = inf (tied entries each get the whole gradient, where amax splits it), 0 for p = 0."""

    @staticmethod
    def forward(ctx: Any, B: Backend, d: Any, *, p: float) -> Any:
        a = B.abs(d)
        if d.shape[1] == 0:  # no features: every distance is 0 (amax of nothing would raise)
            y = B.zeros(d.shape[:1], d.dtype)
        elif p == 0:
            y = B.astype(B.sum(a != 0, (1,), False), d.dtype)
        elif p == math.inf:
            y = B.amax(a, (1,), False)
        elif p == 2:
            y = B.sqrt(B.sum(d * d, (1,), False))
        else:
            y = B.power(B.sum(B.power(a, p), (1,), False), 1.0 / p)
        ctx.save_for_backward(d, y)
        ctx.p = p
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        d, y = ctx.saved_arrays
        if ctx.p == 0:
            return B.zeros(d.shape, d.dtype)
        g, y = B.reshape(g, (-1, 1)), B.reshape(y, (-1, 1))
        if ctx.p == math.inf:
            return g * B.sign(d) * (B.abs(d) == y)
        return g * pnorm_grad(B, d, y, ctx.p)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance (p in [0, inf]) of every pair of rows i < j of an (N, M) input, pairs in row-major
    order: N (N - 1) / 2 values, the upper triangle of the (N, N) distance matrix without its diagonal."""
    input, = cast_early(PDist, input)  # under autocast a 16-bit input comes up to float32 first, as PyTorch's
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input.dtype in (_dt.float16, _dt.bfloat16):  # PyTorch has no 16-bit pdist kernel
        raise NotImplementedError(f"\"pdist\" not implemented for '{torch_dtype_name(input.dtype)}'")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1, device=input.device)
    return PDist.apply(input.index_select(0, i) - input.index_select(0, j), p=float(p))


_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")


def _pairs(B: Backend, x1: Any, x2: Any) -> Any:
    """x1[..., i, :] - x2[..., j, :] as (..., P, R, M)."""
    return B.expand_dims(x1, (x1.ndim - 1,)) - B.expand_dims(x2, (x2.ndim - 2,))


def _safe(B: Backend, a: Any) -> Any:
    """``a`` with its zeros replaced by 1: a divisor (or a base of a negative power) that is never 0."""
    return B.where(a == 0, 1, a)


class Cdist(ArrayFunction):
    """d[..., i, j] = (sum_k |x1[..., i, k] - x2[..., j, k]|^p)^(1/p) (p = 0: the count of unequal k; inf: the
    largest |difference|). With ``use_mm`` (p = 2) d^2 = |x1_i|^2 + |x2_j|^2 - 2 x1_i.x2_j, one matmul and no
    (P, R, M) array, as PyTorch for more than 25 rows (less exact for close rows).

    d d / d x1_i = sum_j g_ij sign(t) (|t| / d_ij)^(p-1) with t = x1_i - x2_j (-that for x2_j); 0 where
    d_ij = 0, and where t = 0 for p < 1 (PyTorch's subgradients). p = 2 in matmul form: w = g / d,
    dx1 = rowsum(w) x1 - w x2. p = inf: sign(t) at each k where |t| = d (every tie gets it); p = 0: none."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x1: Any, x2: Any, p: float, use_mm: bool) -> Any:
        ctx.p = p
        if use_mm:
            sq1 = B.sum(x1 * x1, (x1.ndim - 1,), True)
            sq2 = B.moveaxis(B.sum(x2 * x2, (x2.ndim - 1,), True), -1, -2)
            d2 = sq1 + sq2 - 2 * B.matmul(x1, B.moveaxis(x2, -1, -2))
            d = B.sqrt(B.maximum(d2, 0))
        else:
            diff = _pairs(B, x1, x2)
            axis = (diff.ndim - 1,)
            if p == 0:
                d = B.sum(diff != 0, axis, False).astype(x1.dtype)
            elif p == math.inf:
                d = B.amax(B.abs(diff), axis, False) if diff.shape[-1] else B.zeros(diff.shape[:-1], x1.dtype)
            elif p == 2:
                d = B.sqrt(B.sum(diff * diff, axis, False))
            else:
                d = B.power(B.sum(B.power(B.abs(diff), p), axis, False), 1 / p)
        ctx.save_for_backward(x1, x2, d)
        return d.astype(x1.dtype, copy=False)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x1, x2, d = ctx.saved_arrays
        p = ctx.p
        if p == 0:
            return B.zeros(x1.shape, x1.dtype), B.zeros(x2.shape, x2.dtype), None, None
        if p == 2:
            w = gy / _safe(B, d) * (d != 0)
            rows, cols = B.sum(w, (w.ndim - 1,), True), B.moveaxis(B.sum(w, (w.ndim - 2,), True), -1, -2)
            return (rows * x1 - B.matmul(w, x2), cols * x2 - B.matmul(B.moveaxis(w, -1, -2), x1), None, None)
        diff = _pairs(B, x1, x2)
        dd = B.expand_dims(d, (d.ndim,))
        if p == math.inf:
            f = B.sign(diff) * (B.abs(diff) == dd)
        else:
            t = B.abs(diff)
            f = B.sign(diff) * B.power(_safe(B, t) / _safe(B, dd), p - 1) * (dd != 0)
            if p < 1:
                f = f * (diff != 0)
        g = B.expand_dims(gy, (gy.ndim,)) * f
        return B.sum(g, (g.ndim - 2,), False), -B.sum(g, (g.ndim - 3,), False), None, None


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """(..., P, M) and (..., R, M) -> (..., P, R) p-norm distances between rows (batch dims broadcast);
    p >= 0, inf included. ``compute_mode``: p = 2 through a matmul always ("use_mm_for_euclid_dist"), never
    ("donot_use_mm_for_euclid_dist"), or when P or R exceeds 25 (the default)."""
    for name, x in (("X1", x1), ("X2", x2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"cdist(): argument '{name.lower()}' must be Tensor, not {type(x).__name__}")
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {torch_dtype_name(x.dtype)}")
    x1, x2 = cast_early(Cdist, x1, x2)  # under CPU autocast a 16-bit pair comes up to float32, as PyTorch's
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {torch_dtype_name(x1.dtype)} but found {torch_dtype_name(x2.dtype)}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    try:
        np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError:
        raise broadcast_error([x1.shape[:-2], x2.shape[:-2]]) from None
    use_mm = p == 2 and (compute_mode == _COMPUTE_MODES[1] or
                         (compute_mode == _COMPUTE_MODES[0] and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    return Cdist.apply(x1, x2, float(p), use_mm)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """``norm(input - other, p)`` over all elements of the broadcast difference (0-d): p in 2, 1, inf,
    -inf, 0 or any number, as ``torch.dist``; floating inputs only."""
    for name, position, t in (("input", 1, input), ("other", 2, other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"dist(): argument '{name}' (position {position}) must be Tensor, not {type(t).__name__}")
    d = input - other
    if not d.is_floating_point():
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{torch_dtype_name(d.dtype)} instead.")
    return norm(d, p)
