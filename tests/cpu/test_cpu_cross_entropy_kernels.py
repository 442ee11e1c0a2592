"""The CPU's one-pass float32 cross-entropy over class indices (backends/cpu/loss.py) against a float64
reference built here: shapes, ignored rows, every reduction through ``F.cross_entropy`` (loss and gradient),
NaN and infinite logits, out-of-range targets; and the generic body where the kernels do not apply (class
weights, label smoothing, float64, (N, C, d) logits)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
from helpers import kernel_launches
from minitensor.backends import get_backend
from minitensor.backends.cpu.numba_kernels import load

CPU = get_backend("cpu")
F = mt.nn.functional
needs_numba = pytest.mark.skipif(load("loss") is None, reason="no Numba: the generic body runs")
IGNORE = -100


def reference(x: np.ndarray, target: np.ndarray, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """(losses (N,), d losses.sum() / dx (N, C)) in float64; ignored rows give 0 and 0."""
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    log_p = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    rows = np.arange(x.shape[0])
    losses = np.where(kept, -log_p[rows, safe], 0.0)
    grad = np.exp(log_p)
    grad[rows, safe] -= 1
    return losses, grad * kept[:, None]


@given(st.integers(1, 40), st.integers(1, 70), st.floats(0.1, 30), st.booleans(), st.integers(0, 2 ** 31 - 1))
@settings(max_examples=60, deadline=None)
def test_losses_and_gradients_match_float64(rows, classes, scale, with_ignored, seed):
    r = np.random.default_rng(seed)
    x = (r.standard_normal((rows, classes)) * scale).astype(np.float32)
    target = r.integers(0, classes, rows)
    if with_ignored:
        target[r.random(rows) < 0.3] = IGNORE
    want_losses, want_grad = reference(x, target, IGNORE)
    losses, log_probs = CPU.softmax_cross_entropy(x, target, None, IGNORE, 0.0)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=2e-6 * scale)
    g = r.standard_normal(rows).astype(np.float32)
    gx = CPU.softmax_cross_entropy_backward(g, log_probs, target, None, IGNORE, 0.0)
    np.testing.assert_allclose(gx, want_grad * g[:, None], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_every_reduction_through_the_functional(reduction):
    r = np.random.default_rng(7)
    x = r.standard_normal((12, 5)).astype(np.float32)
    target = r.integers(0, 5, 12)
    target[[2, 9]] = IGNORE
    logits = mt.tensor(x, requires_grad=True)
    out = F.cross_entropy(logits, mt.tensor(target), reduction=reduction)
    out.sum().backward()
    losses, grad = reference(x, target, IGNORE)
    kept = (target != IGNORE).sum()
    want = {"mean": losses.sum() / kept, "sum": losses.sum(), "none": losses}[reduction]
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(logits.grad.numpy(), grad / kept if reduction == "mean" else grad, rtol=1e-5,
                               atol=1e-7)


@needs_numba
def test_the_kernels_run_for_float32_rows_and_agree_with_the_generic_body():
    from minitensor.backends.generic.loss import LossOps
    r = np.random.default_rng(3)
    x = (r.standard_normal((64, 65)) * 3).astype(np.float32)
    target = r.integers(0, 65, 64)
    results: list = []
    launched = kernel_launches(lambda: results.append(CPU.softmax_cross_entropy(x, target, None, IGNORE, 0.0)))
    g = np.full(64, 0.5, np.float32)
    launched += kernel_launches(lambda: CPU.softmax_cross_entropy_backward(g, results[0][1], target, None,
                                                                          IGNORE, 0.0))
    assert launched == ["softmax_cross_entropy", "softmax_cross_entropy_backward"]
    losses, log_probs = results[0]
    generic_losses, generic_log_probs = LossOps.softmax_cross_entropy(CPU, x, target, None, IGNORE, 0.0)
    np.testing.assert_allclose(log_probs, generic_log_probs, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(losses, generic_losses, rtol=1e-6)
    np.testing.assert_allclose(CPU.softmax_cross_entropy_backward(g, log_probs, target, None, IGNORE, 0.0),
                               LossOps.softmax_cross_entropy_backward(CPU, g, generic_log_probs, target, None,
                                                                      IGNORE, 0.0), rtol=1e-6, atol=1e-8)


def test_special_logits():
    inf, nan = np.inf, np.nan
    x = np.array([[1.0, nan, 2.0],        # NaN: the row's log-probabilities, loss and gradient are NaN
                  [inf, 0.0, 1.0],        # +inf: NaN as well (inf - inf), as NumPy's body and PyTorch
                  [-inf, -inf, -inf],     # no finite logit: NaN
                  [-inf, 0.0, 1.0],       # -inf on another class: probability 0, finite loss
                  [88.0, 100.0, -100.0],  # large logits: no overflow
                  [nan, nan, nan],        # an ignored row: loss 0 whatever its logits; gradient 0 p (NaN)
                  [1.0, 2.0, 3.0]],       # an ignored row: loss and gradient 0
                 np.float32)
    target = np.array([0, 1, 2, 2, 1, IGNORE, IGNORE])
    losses, log_probs = CPU.softmax_cross_entropy(x, target, None, IGNORE, 0.0)
    assert np.isnan(losses[:3]).all() and np.isnan(log_probs[:3]).all()
    # atol: float32's log(1 + e^-12) and 1 - p for p near 1 are off by a rounding of 1 (1.2e-7)
    np.testing.assert_allclose(losses[3:5], reference(x[3:5], target[3:5], IGNORE)[0], rtol=1e-6, atol=2e-7)
    assert log_probs[3, 0] == -inf
    np.testing.assert_array_equal(losses[5:], [0, 0])
    gx = CPU.softmax_cross_entropy_backward(np.ones(7, np.float32), log_probs, target, None, IGNORE, 0.0)
    assert np.isnan(gx[:3]).all() and np.isnan(gx[5]).all()
    np.testing.assert_allclose(gx[3:5], reference(x[3:5], target[3:5], IGNORE)[1], rtol=1e-6, atol=2e-7)
    np.testing.assert_array_equal(gx[6], [0, 0, 0])


def test_out_of_range_targets_raise_before_any_work():
    x = mt.randn(4, 3)
    for bad in (3, -1):
        with pytest.raises(IndexError, match=f"target {bad} is out of bounds for 3 classes"):
            F.cross_entropy(x, mt.tensor([0, 1, bad, 2]))
    with pytest.raises(IndexError, match="out of bounds"):  # the backend's own guard, called directly
        CPU.softmax_cross_entropy(np.zeros((2, 3), np.float32), np.array([0, 7]), None, IGNORE, 0.0)


@needs_numba
def test_the_generic_body_serves_the_other_cases():
    r = np.random.default_rng(5)
    x = r.standard_normal((6, 4)).astype(np.float32)
    target = r.integers(0, 4, 6)
    weight = np.array([1.0, 2.0, 0.5, 1.0], np.float32)
    for args in ((x, target, weight, IGNORE, 0.0), (x, target, None, IGNORE, 0.1),
                 (x.astype(np.float64), target, None, IGNORE, 0.0),
                 (r.standard_normal((6, 4, 3)).astype(np.float32), r.integers(0, 4, (6, 3)), None, IGNORE, 0.0)):
        assert kernel_launches(lambda: CPU.softmax_cross_entropy(*args)) == []
    x64 = x.astype(np.float64)
    losses, _ = CPU.softmax_cross_entropy(x64, target, None, IGNORE, 0.0)
    np.testing.assert_allclose(losses, reference(x64, target, IGNORE)[0], rtol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64])  # the kernel and the generic body
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_matches_pytorch_with_ignored_and_nan_rows(dtype, reduction):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(11)
    x = (r.standard_normal((32, 65)) * 4).astype(dtype)
    x[3] = np.nan  # ignored below: loss 0, gradient NaN (0 times exp(NaN)), as PyTorch's
    x[4, 7] = np.nan  # not ignored: NaN loss
    target = r.integers(0, 65, 32)
    target[::3] = IGNORE
    target[4] = 7
    logits = mt.tensor(x, requires_grad=True)
    out = F.cross_entropy(logits, mt.tensor(target), reduction=reduction)
    out.sum().backward()
    tx = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction)
    want.sum().backward()
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=rtol)
    np.testing.assert_allclose(logits.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=1e-8)
