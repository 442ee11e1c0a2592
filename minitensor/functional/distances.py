"""``cdist``: the p-norm distance between each pair of rows of two batches of row vectors, on the linalg
and reduce families' backend methods (no backend family of its own)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from ._util import broadcast_error, torch_dtype_name

__all__ = ["cdist"]

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
        x1, x2, d = ctx.saved_tensors
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
