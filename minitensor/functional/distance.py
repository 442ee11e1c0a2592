"""Distances between vectors: cosine_similarity, pairwise_distance and pdist (``torch.nn.functional``'s names,
also ``minitensor.*``). The first two compose the reductions' norms, so their gradients are PyTorch's;
pdist has a Function of its own for PyTorch's per-pair gradient (no split of tied maxima, a zero gradient
for p = 0)."""
from __future__ import annotations

import math
from typing import Any

from .. import dtypes as _dt
from ..amp.autocast_mode import cast_early
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import triu_indices
from ..tensor import Tensor
from ._util import ClampMinValue, cast, norm_dim, torch_dtype_name
from .reduce import norm, pnorm_grad
from .stacking import broadcast_tensors

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


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
        d, y = ctx.saved_tensors
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
