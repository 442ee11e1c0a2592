"""tril / triu and F.scaled_dot_product_attention against float64 NumPy references: shapes, masks (bool and
float), causal, GQA, scale, dropout; gradients against finite differences and the composed ops."""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import FEW, SETTINGS, as_np, assert_close, check_grad, randn, seeds, t64
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
import minitensor.nn.functional as F


# ------------------------------------------------------------------------------------------- tril / triu
@SETTINGS
@given(shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=5), k=st.integers(-5, 5), seed=seeds)
def test_tril_triu_match_numpy_and_pass_their_mask_to_the_gradient(shape, k, seed):
    a = randn(seed, shape)
    for name in ("tril", "triu"):
        ref = getattr(np, name)
        x = t64(a)
        y = getattr(mt, name)(x, diagonal=k)
        assert_close(y, ref(a, k), rtol=0, atol=0)
        assert_close(getattr(x, name)(k), ref(a, k), rtol=0, atol=0)
        g = randn(seed + 1, shape)
        y.backward(mt.tensor(g))
        assert_close(x.grad, ref(g, k), rtol=0, atol=0)


def test_tril_triu_gradcheck_in_place_forms_and_errors():
    check_grad(lambda x: mt.tril(x, -1) * x, randn(0, (2, 3, 4)))
    check_grad(lambda x: x.triu(1).exp(), randn(1, (4, 3)))
    x = mt.ones(3, 3)
    assert x.triu_(1) is x
    assert_close(x, np.triu(np.ones((3, 3)), 1), rtol=0, atol=0)
    assert_close(mt.ones(2, 2).tril_(), np.tril(np.ones((2, 2))), rtol=0, atol=0)
    assert_close(mt.triu(mt.full((3, 3), -math.inf), 1), np.triu(np.full((3, 3), -np.inf), 1), rtol=0, atol=0)
    assert mt.tril(mt.ones(2, 2, dtype=mt.bool)).dtype == mt.bool
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        mt.tril(mt.ones(3))
    with pytest.raises(TypeError, match="diagonal"):
        mt.triu(mt.ones(2, 2), 0.5)


# ------------------------------------------------------------------------------------ attention reference
def sdpa_ref(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """PyTorch's documented reference, in float64; rows with every key masked give 0 (safe softmax)."""
    length, keys = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    bias = np.zeros((length, keys))
    if causal:
        bias[~np.tri(length, keys, dtype=bool)] = -np.inf
    if mask is not None:
        bias = bias + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if gqa:
        groups = q.shape[-3] // k.shape[-3]
        k, v = np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale + bias
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
    return np.nan_to_num(p, nan=0.0) @ v


def composed(q, k, v, bias, scale):
    """The same attention from the separately tested ops (matmul, softmax), for the gradients."""
    s = (q @ k.transpose(-2, -1)) * scale
    if bias is not None:
        s = s + bias
    return s.softmax(-1) @ v


@st.composite
def attention_cases(draw):
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    kv_heads, groups = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    length, keys, e, ev = (draw(st.integers(1, 5)) for _ in range(4))
    mask_kind = draw(st.sampled_from(["none", "bool", "float", "causal"]))
    mask_shape = draw(st.sampled_from([(length, keys), (kv_heads * groups, length, keys), (1, 1, keys)]))
    scale = draw(st.none() | st.floats(0.1, 2.0))
    return (batch, kv_heads, groups, length, keys, e, ev, mask_kind, mask_shape, scale)


@SETTINGS
@given(case=attention_cases(), seed=seeds)
def test_sdpa_matches_the_reference_over_shapes_masks_causal_and_gqa(case, seed):
    batch, kv_heads, groups, length, keys, e, ev, mask_kind, mask_shape, scale = case
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(batch + (kv_heads * groups, length, e))
    k = rng.standard_normal(batch + (kv_heads, keys, e))
    v = rng.standard_normal(batch + (kv_heads, keys, ev))
    mask = None
    if mask_kind == "bool":
        mask = rng.random(mask_shape) > 0.3
    elif mask_kind == "float":
        mask = rng.standard_normal(mask_shape)
    causal = mask_kind == "causal"
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), None if mask is None else mt.tensor(mask),
                                         is_causal=causal, scale=scale, enable_gqa=True)
    expected = sdpa_ref(q, k, v, mask, causal, scale, gqa=True)
    assert_close(out, expected, rtol=1e-10, atol=1e-12)
    if groups == 1:  # without GQA the key heads equal the query heads
        assert_close(F.scaled_dot_product_attention(t64(q), t64(k), t64(v), None if mask is None else
                                                    mt.tensor(mask), is_causal=causal, scale=scale), expected,
                     rtol=1e-10, atol=1e-12)


@FEW
@given(case=attention_cases(), seed=seeds)
def test_sdpa_gradients_match_the_composed_ops(case, seed):
    batch, kv_heads, groups, length, keys, e, ev, mask_kind, mask_shape, scale = case
    rng = np.random.default_rng(seed)
    heads = kv_heads * groups
    q = rng.standard_normal(batch + (heads, length, e))
    k = rng.standard_normal(batch + (heads, keys, e))
    v = rng.standard_normal(batch + (heads, keys, ev))
    bias = rng.standard_normal(mask_shape) if mask_kind != "none" else None  # float masks: no -inf rows
    go = rng.standard_normal(batch + (heads, length, ev))
    grads = []
    for fn in ("fused", "composed"):
        ts = [t64(a) for a in (q, k, v)] + ([] if bias is None else [t64(bias)])
        b = ts[3] if bias is not None else None
        sc = 1 / math.sqrt(e) if scale is None else scale
        out = F.scaled_dot_product_attention(*ts[:3], b, scale=scale) if fn == "fused" else \
            composed(*ts[:3], b, sc)
        out.backward(mt.tensor(go))
        grads.append([as_np(t.grad) for t in ts])
    for fused, reference in zip(*grads):
        assert_close(fused, reference, rtol=1e-9, atol=1e-11)


def test_sdpa_gradcheck_with_causal_gqa_and_a_float_mask_that_requires_grad():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 2, 4, 5)), rng.standard_normal((2, 2, 4, 3))
    check_grad(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True, enable_gqa=True), q, k, v)
    check_grad(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, m, scale=0.7, enable_gqa=True),
               q, k, v, rng.standard_normal((4, 3, 4)))


def test_sdpa_rows_with_every_key_masked_give_zeros_and_zero_gradients():
    q, k, v = (t64(randn(s, (2, 3, 4))) for s in range(3))
    mask = mt.tensor(np.array([[True, True, False], [False, False, False], [True, False, True]]))
    out = F.scaled_dot_product_attention(q, k, v, mask)
    assert_close(out[:, 1], np.zeros((2, 4)), rtol=0, atol=0)
    out.sum().backward()
    assert np.isfinite(as_np(q.grad)).all() and np.isfinite(as_np(k.grad)).all()
    assert_close(q.grad[:, 1], np.zeros((2, 4)), rtol=0, atol=0)


def test_sdpa_dropout_scales_kept_weights_and_backpropagates_through_the_same_mask():
    # with v the identity, the output is the dropped attention matrix itself: each weight 0 or P / (1 - p)
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((4, 16, 8)), rng.standard_normal((4, 16, 8))
    p = sdpa_ref(q, k, np.broadcast_to(np.eye(16), (4, 16, 16)))
    mt.manual_seed(0)
    v = t64(np.broadcast_to(np.eye(16), (4, 16, 16)).copy())
    out = F.scaled_dot_product_attention(t64(q), t64(k), v, dropout_p=0.25)
    dropped = as_np(out)
    kept = dropped != 0
    assert 0.6 < kept.mean() < 0.9
    assert_close(dropped[kept], p[kept] / 0.75)
    go = rng.standard_normal((4, 16, 16))
    out.backward(mt.tensor(go))
    assert_close(v.grad, np.swapaxes(dropped, -1, -2) @ go)
    everything = F.scaled_dot_product_attention(t64(q), t64(k), v, dropout_p=1.0)
    assert_close(everything, np.zeros((4, 16, 16)), rtol=0, atol=0)


def test_sdpa_float32_and_errors():
    q = mt.randn(2, 3, 4)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.dtype == mt.float32 and tuple(out.shape) == (2, 3, 4)
    assert_close(out, sdpa_ref(*(as_np(q).astype(np.float64),) * 3, causal=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, mt.ones(3, 3, dtype=mt.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="multiple"):
        F.scaled_dot_product_attention(mt.randn(3, 2, 4), mt.randn(2, 2, 4), mt.randn(2, 2, 4), enable_gqa=True)
    with pytest.raises(RuntimeError, match="embedding dim"):
        F.scaled_dot_product_attention(q, mt.randn(2, 3, 5), q)
    with pytest.raises(RuntimeError, match="bool or floating"):
        F.scaled_dot_product_attention(q, q, q, mt.ones(3, 3, dtype=mt.int64))


@pytest.mark.torch
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal"])
def test_sdpa_matches_pytorch_forward_and_backward(mask_kind):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 4, 5, 8)), rng.standard_normal((2, 2, 6, 8)), rng.standard_normal((2, 2, 6, 3))
    mask = {"bool": rng.random((5, 6)) > 0.3, "float": rng.standard_normal((4, 5, 6))}.get(mask_kind)
    mask = None if mask is None else mask.copy()
    if mask_kind == "bool":
        mask[:, 0] = True  # PyTorch's fused kernels differ on rows with every key masked
    go = rng.standard_normal((2, 4, 5, 3))
    ours = [t64(a) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    kw = {"is_causal": mask_kind == "causal", "enable_gqa": True}
    out = F.scaled_dot_product_attention(*ours, None if mask is None else mt.tensor(mask), **kw)
    ref = torch.nn.functional.scaled_dot_product_attention(*theirs, None if mask is None else torch.tensor(mask),
                                                           **kw)
    assert_close(out, ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.backward(mt.tensor(go))
    ref.backward(torch.tensor(go))
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad.numpy(), rtol=1e-9, atol=1e-11)
