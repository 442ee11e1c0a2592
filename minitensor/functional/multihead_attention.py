"""``multi_head_attention_forward``: PyTorch's functional multi-head attention, which ``nn.MultiheadAttention``
and the Transformer layers call.

Inputs are sequence-first: query (L, N, E), key (S, N, kdim), value (S, N, vdim), or unbatched (L, E).
Heads are views, never copies: the projections (L, N, E) are seen as (N, H, L, D) with D = E / H, which
is PyTorch's (N * H, L, D) head order. Masks here follow PyTorch's MultiheadAttention convention: a bool
``attn_mask`` or ``key_padding_mask`` is True where attention is NOT allowed; a float one is added to the
scores. Both become one additive float mask.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..tensor import Tensor
from ..creation import zeros
from .activation import softmax
from .attention import scaled_dot_product_attention
from .dropout import dropout
from .linalg import linear
from .shape import cat, pad

__all__ = ["multi_head_attention_forward"]


def _none_or_dtype(input: Tensor | None) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or minitensor.Tensor")


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str, target_type: Any,
                    check_other: bool = True) -> Tensor | None:
    """A bool mask (True = masked out) as a float mask of ``target_type`` with -inf there and 0 elsewhere;
    a float mask as it is."""
    if mask is None:
        return None
    if mask.array.dtype == np.bool_:
        if check_other and other_type is not None and other_type != mask.dtype:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
                          "for both instead.", stacklevel=3)
        out = zeros(tuple(mask.shape), dtype=target_type, device=mask.device)
        out.array[mask.array] = -np.inf
        return out
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    return mask


def _shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                 attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the input is batched (3-D query), with PyTorch's assertions on the other shapes: key and value
    of query's dims, key_padding_mask of one fewer, attn_mask 2-D or 3-D (unbatched and 3-D: one mask per
    head)."""
    n = query.ndim
    if n not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {n}-D "
                             "query tensor")
    batched = n == 3
    what = "For batched (3-D) `query`" if batched else "For unbatched (2-D) `query`"
    if key.ndim != n or value.ndim != n:
        raise AssertionError(f"{what}, expected `key` and `value` to be {n}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != n - 1:
        raise AssertionError(f"{what}, expected `key_padding_mask` to be `None` or {n - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"{what}, expected `attn_mask` to be `None`, 2-D or 3-D "
                                 f"but found {attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{tuple(attn_mask.shape)}")
    return batched


def _in_projection_packed(query: Tensor, key: Tensor, value: Tensor, w: Tensor, b: Tensor | None
                          ) -> tuple[Tensor, ...]:
    """q, k, v from one (3E, E) weight: self-attention (query is key is value) is one GEMM with 3E outputs,
    encoder-decoder attention (key is value) two, anything else three."""
    e = query.shape[-1]
    if key is value:
        if query is key:
            return linear(query, w, b).chunk(3, dim=-1)
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        return (linear(query, w_q, b_q), *linear(key, w_kv, b_kv).chunk(2, dim=-1))
    biases = (None,) * 3 if b is None else b.chunk(3)
    return tuple(linear(x, wi, bi) for x, wi, bi in zip((query, key, value), w.chunk(3), biases))


def _heads(x: Tensor, num_heads: int) -> Tensor:
    """(S, N, E) -> (N, H, S, E / H), a view."""
    return x.unflatten(-1, (num_heads, x.shape[-1] // num_heads)).permute(1, 2, 0, 3)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None, static_v: Tensor | None = None,
        average_attn_weights: bool = True, is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention: out_proj(concat_h softmax(q_h k_h^T / sqrt(D) + mask) v_h), q, k, v the input
    projections split into ``num_heads`` heads of D = E / H.

    Returns (attn_output (L, N, E), attn_weights (N, L, S) averaged over heads, (N, H, L, S) with
    ``average_attn_weights=False``, or None without ``need_weights``); unbatched input drops N."""
    is_batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # keep the identities (query is key is value) that pick the packed projection's GEMMs
        q1 = query.unsqueeze(1)
        k1 = q1 if key is query else key.unsqueeze(1)
        query, key, value = q1, k1, k1 if value is key else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask),
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint replaces the mask (scaled_dot_product_attention's is_causal)
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal alone
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight and key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                             f"{tuple(value.shape[:2])}")
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                 "v_proj_weight is None")
        biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value),
                                                     (q_proj_weight, k_proj_weight, v_proj_weight), biases))
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        src_len = key.shape[0]
        expected = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if attn_mask.ndim not in (2, 3):
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is {tuple(attn_mask.shape)}, but "
                               f"should be {expected}.")
        if attn_mask.ndim == 3:
            attn_mask = attn_mask.view(bsz, num_heads, tgt_len, src_len)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    q = _heads(q, num_heads)
    k = _heads(k, num_heads) if static_k is None else _static(static_k, "static_k", bsz, num_heads, head_dim)
    v = _heads(v, num_heads) if static_v is None else _static(static_v, "static_v", bsz, num_heads, head_dim)
    if add_zero_attn:
        k = cat([k, zeros(k.shape[:2] + (1, head_dim), dtype=k.dtype, device=k.device)], dim=2)
        v = cat([v, zeros(v.shape[:2] + (1, head_dim), dtype=v.dtype, device=v.device)], dim=2)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[2]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:  # PyTorch's explicit path: a plain softmax, the weights after dropout come back
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights_out = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights_out = dropout(weights_out, p=dropout_p)
        heads_out = weights_out @ v
    else:
        weights_out = None
        heads_out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = heads_out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if weights_out is not None and average_attn_weights:
        weights_out = weights_out.mean(dim=1)
    if not is_batched:
        out = out.squeeze(1)
        weights_out = None if weights_out is None else weights_out.squeeze(0)
    return out, weights_out


def _static(t: Tensor, name: str, bsz: int, num_heads: int, head_dim: int) -> Tensor:
    """A precomputed key or value (N * H, S, D) as (N, H, S, D)."""
    if t.ndim != 3 or t.shape[0] != bsz * num_heads or t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name} of shape ({bsz * num_heads}, S, {head_dim}), but got "
                             f"{tuple(t.shape)}")
    return t.view(bsz, num_heads, t.shape[1], head_dim)
