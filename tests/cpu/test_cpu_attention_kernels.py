"""The CPU's one-pass float32 attention softmax (backends/cpu/attention.py) against a float64 reference built
here: causal and not, L above and below S, masked rows, NaN and infinite scores, empty shapes; the backward;
and the generic body where the kernels do not apply."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
from helpers import kernel_launches
from minitensor.backends import get_backend
from minitensor.backends.cpu.numba_kernels import load

CPU = get_backend("cpu")
needs_numba = pytest.mark.skipif(load("attention") is None, reason="no Numba: the generic body runs")


def reference(s: np.ndarray, causal: bool) -> np.ndarray:
    """The safe softmax in float64 with the causal (top-left) mask."""
    s = s.astype(np.float64)
    if s.size == 0:
        return s
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)


@given(st.integers(1, 3), st.integers(0, 9), st.integers(0, 9), st.booleans(), st.integers(0, 2 ** 31 - 1))
@settings(max_examples=60, deadline=None)
def test_forward_and_backward_match_float64(batch, queries, keys, causal, seed):
    r = np.random.default_rng(seed)
    s = (r.standard_normal((batch, 2, queries, keys)) * 4).astype(np.float32)
    want = reference(s, causal)
    p = CPU.attention_softmax(s.copy(), causal)
    np.testing.assert_allclose(p, want, rtol=2e-6, atol=1e-7)
    gp = r.standard_normal(s.shape).astype(np.float32)
    want_gs = want * (gp - (gp.astype(np.float64) * want).sum(-1, keepdims=True))
    np.testing.assert_allclose(CPU.attention_softmax_backward(gp.copy(), p), want_gs, rtol=1e-5, atol=1e-6)


@needs_numba
def test_the_kernels_run_for_float32_and_agree_with_the_generic_body():
    s = np.random.default_rng(1).standard_normal((4, 16, 24)).astype(np.float32)
    gp = np.random.default_rng(2).standard_normal(s.shape).astype(np.float32)
    launched = kernel_launches(lambda: CPU.attention_softmax_backward(gp.copy(),
                                                                      CPU.attention_softmax(s.copy(), True)))
    assert launched == ["attention_softmax", "attention_softmax_backward"]
    from minitensor.backends.generic.attention import AttentionOps
    for causal in (False, True):
        np.testing.assert_allclose(CPU.attention_softmax(s.copy(), causal),
                                   AttentionOps.attention_softmax(CPU, s.copy(), causal), rtol=1e-6, atol=1e-7)


def test_masked_and_special_rows():
    inf, nan = np.inf, np.nan
    s = np.array([[[-inf, -inf, -inf],      # every key masked: zeros, not 0/0
                   [0.0, -inf, 1.0],        # a masked key: 0 there
                   [1.0, nan, 2.0],         # NaN: the row is NaN
                   [88.0, 100.0, -100.0],   # large scores: no overflow
                   [nan, 1.0, 2.0],         # NaN first (the running maxima start from it): NaN too
                   [1.0, 2.0, 3.0]]], np.float32)
    p = CPU.attention_softmax(s.copy(), False)
    np.testing.assert_array_equal(p[0, 0], [0, 0, 0])
    np.testing.assert_allclose(p[0, 1], reference(s, False)[0, 1], rtol=1e-6)
    assert np.isnan(p[0, 2]).all() and np.isnan(p[0, 4]).all()
    np.testing.assert_allclose(p[0, 5], reference(s, False)[0, 5], rtol=1e-6)
    np.testing.assert_allclose(p[0, 3], reference(s, False)[0, 3], rtol=1e-6, atol=1e-30)


def test_causal_with_more_queries_than_keys_and_float64_and_strided():
    s = np.random.default_rng(3).standard_normal((2, 7, 3)).astype(np.float32)
    np.testing.assert_allclose(CPU.attention_softmax(s.copy(), True), reference(s, True), rtol=2e-6, atol=1e-7)
    s64 = s.astype(np.float64)
    assert kernel_launches(lambda: CPU.attention_softmax(s64.copy(), True)) == []  # the generic body
    np.testing.assert_allclose(CPU.attention_softmax(s64.copy(), True), reference(s, True), rtol=1e-12)
    strided = np.random.default_rng(4).standard_normal((3, 5, 2)).astype(np.float32).swapaxes(-1, -2)
    assert kernel_launches(lambda: CPU.attention_softmax(strided.copy(order="K"), False)) == []
    np.testing.assert_allclose(CPU.attention_softmax(strided.copy(order="K"), False), reference(strided, False),
                               rtol=2e-6)


def test_sdpa_float32_follows_float64_forward_and_backward():
    r = np.random.default_rng(5)
    q, k, v = (r.standard_normal((2, 3, 10, 8)) for _ in range(3))
    grads = {}
    for dt in (mt.float32, mt.float64):
        ts = [mt.tensor(a, dtype=dt, requires_grad=True) for a in (q, k, v)]
        out = mt.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
        out.backward(mt.ones_like(out))
        grads[dt] = [out.detach().numpy()] + [t.grad.numpy() for t in ts]
    for a, b in zip(grads[mt.float32], grads[mt.float64]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
