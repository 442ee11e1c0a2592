"""Scaled dot-product attention: one fused Function (forward and a hand-written backward).

    S = scale q k^T + bias        (..., L, S_len); bias from attn_mask and the causal triangle
    P = softmax(S, dim=-1)        rows that mask every key give P = 0 (PyTorch's safe softmax), not nan
    O = dropout(P) v              (..., L, Ev)

Composed from matmul, mul, add, softmax and dropout this is six nodes that each allocate and pass over the
(..., L, S_len) scores; fused it is two GEMMs, in-place passes over one scores array, and q, k, v and P
are all that is saved (the dropout mask too when p > 0). The backward, with D = dropout's scaling:

    dV = (D P)^T dO,   dP = D (dO V^T),   dS = P (dP - rowsum(dP P)),   dQ = scale dS K,   dK = scale dS^T Q

q is scaled before its product (a pass over (L, E) rather than over the (L, S) scores).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor, _wrap
from ..creation import zeros

__all__ = ["scaled_dot_product_attention"]


def _probabilities(node: Any, saved: Any, p: Any, out_shape: tuple[int, ...]) -> Any:
    """For a double backward: P = softmax(scale q k^T + C) with C = log P - scale q k^T held constant, so P
    (its value kept) depends on q and k as it does; None (no double backward) when the bias needs a gradient."""
    if node.needs_input_grad[3]:
        return None
    from ..autograd.higher_order import pinned
    from ..autograd.recording import Rec
    from .activation import softmax
    B, dev = node._device.backend, node._device
    q, k = (a if type(a) is Rec else Rec(_wrap(a, dev)) for a in saved[:2])
    scores = (q * node.scale) @ k.swapaxes(-1, -2)
    with np.errstate(divide="ignore"):
        rest = B.log(p) - scores.t.array  # -inf where P is 0 (masked)
    return pinned(Rec(softmax((scores + rest).t, -1)), p)


class ScaledDotProductAttention(ArrayFunction):
    """q (..., L, E), k (..., S, E), v (..., S, Ev), batch dims broadcasting as in matmul; ``bias`` a float
    array broadcasting to (..., L, S) or None; the gradient of a bias that requires grad is dS."""
    derived_saves = {3: _probabilities}

    @staticmethod
    def forward(ctx: Any, B: Backend, q: Any, k: Any, v: Any, bias: Any, *, scale: float, causal: bool,
                dropout_p: float) -> Any:
        # scaling q (..., L, E) is cheaper than scaling the scores, and gives BLAS a contiguous operand
        s = B.matmul(q * q.dtype.type(scale), k.swapaxes(-1, -2))
        if bias is not None:
            if np.broadcast_shapes(s.shape, bias.shape) == s.shape:
                s += bias
            else:  # the mask has batch dims that q and k lack
                s = s + bias
        p = B.attention_softmax(s, causal)  # causal: top-left aligned, query i sees keys 0..i
        keep = None
        pd = p
        if dropout_p > 0:
            keep = B.bernoulli(1 - dropout_p, p.shape)
            pd = B.dropout_backward(p, keep, dropout_p)  # P * keep / (1 - p), the same scaling as dropout
        ctx.save_for_backward(q, k, v, p, keep)  # q, not qs: q is usually a view that lives on anyway
        ctx.scale, ctx.dropout_p = scale, dropout_p
        return B.matmul(pd, v)

    @staticmethod
    def backward(ctx: Any, B: Backend, go: Any) -> Any:
        q, k, v, p, keep = ctx.saved_arrays
        need_q, need_k, need_v, need_bias = ctx.needs_input_grad
        dropped = keep is not None
        gv = None
        if need_v:
            pd = B.dropout_backward(p, keep, ctx.dropout_p) if dropped else p
            gv = B.matmul(pd.swapaxes(-1, -2), go)
            del pd
        if not (need_q or need_k or need_bias):
            return None, None, gv, None
        gs = B.matmul(go, v.swapaxes(-1, -2))  # dP, then dS in place
        if dropped:
            gs = B.dropout_backward(gs, keep, ctx.dropout_p)
        gs = B.attention_softmax_backward(gs, p)
        gbias = gs if need_bias else None
        scale = gs.dtype.type(ctx.scale)
        gq = _scaled(B.matmul(gs, k), scale) if need_q else None
        gk = _scaled(B.matmul(gs.swapaxes(-1, -2), q), scale) if need_k else None
        return gq, gk, gv, gbias


def _scaled(a: Any, scale: Any) -> Any:
    a *= scale
    return a


def _mask_bias(attn_mask: Tensor, query: Tensor) -> Tensor:
    """attn_mask as an additive float bias: a bool mask (True = takes part) becomes 0 / -inf."""
    if attn_mask.dtype.is_floating_point:
        return attn_mask if attn_mask.dtype == query.dtype else attn_mask.to(query.dtype)
    if attn_mask.array.dtype != np.bool_:
        raise RuntimeError(f"scaled_dot_product_attention: attn_mask must be bool or floating point "
                           f"(or the query's dtype), got {attn_mask.dtype}")
    bias = zeros(tuple(attn_mask.shape), dtype=query.dtype, device=query.device)
    bias.array[~attn_mask.array] = -np.inf
    return bias


def _check(query: Tensor, key: Tensor, value: Tensor) -> None:
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"scaled_dot_product_attention: query, key and value must be at least 2-D, got "
                           f"{tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}")
    if not (query.dtype == key.dtype == value.dtype) or not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected query, key and value to have the same "
                           f"floating dtype, but got query.dtype: {query.dtype}, key.dtype: {key.dtype} and "
                           f"value.dtype: {value.dtype} instead.")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding dim, "
                           f"got {query.shape[-1]} and {key.shape[-1]}")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, "
                           f"got {key.shape[-2]} and {value.shape[-2]}")


def _group_heads(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor, int]:
    """GQA without copies: q (..., Hq, L, E) seen as (..., Hk, G, L, E) and k, v as (..., Hk, 1, S, E),
    so each key/value head serves G = Hq / Hk query heads through broadcasting (the engine sums dK over
    the G axis)."""
    if query.ndim < 3 or key.ndim < 3 or value.ndim < 3:
        raise RuntimeError("scaled_dot_product_attention: enable_gqa needs a heads dim (-3) on query, key "
                           "and value")
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hk != hv or hq % hk:
        raise RuntimeError(f"scaled_dot_product_attention: with enable_gqa the number of query heads ({hq}) "
                           f"must be a multiple of the key/value heads ({hk}, {hv}), which must be equal")
    groups = hq // hk
    return query.unflatten(-3, (hk, groups)), key.unsqueeze(-3), value.unsqueeze(-3), groups


def _group_bias(bias: Tensor, groups: int, heads: int) -> Tensor:
    """A bias broadcasting to (..., Hq, L, S), reshaped to broadcast to (..., Hk, G, L, S)."""
    if bias.ndim < 3:
        return bias
    if bias.shape[-3] == heads:
        return bias.unflatten(-3, (heads // groups, groups))
    return bias.unsqueeze(-3)  # a heads dim of 1


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over query (N..., Hq, L, E), key (N..., H, S, E) and value
    (N..., H, S, Ev) -> (N..., Hq, L, Ev).

    ``attn_mask``: bool (True = the key takes part) or float (added to the scores), broadcasting to
    (N..., Hq, L, S). ``is_causal``: query i attends to keys 0..i (top-left aligned; no attn_mask with it).
    ``scale`` defaults to 1 / sqrt(E). ``dropout_p`` drops attention weights (always, as PyTorch: pass 0
    outside training). ``enable_gqa``: H may divide Hq, each key/value head serving Hq / H query heads."""
    _check(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    bias = None if attn_mask is None else _mask_bias(attn_mask, query)
    heads = query.shape[-3] if query.ndim >= 3 else 1
    if enable_gqa and heads != (key.shape[-3] if key.ndim >= 3 else 1):
        query, key, value, groups = _group_heads(query, key, value)
        bias = None if bias is None else _group_bias(bias, groups, heads)
        out = ScaledDotProductAttention.apply(query, key, value, bias, scale=scale, causal=bool(is_causal),
                                              dropout_p=float(dropout_p))
        return out.flatten(-4, -3)
    return ScaledDotProductAttention.apply(query, key, value, bias, scale=scale, causal=bool(is_causal),
                                           dropout_p=float(dropout_p))
