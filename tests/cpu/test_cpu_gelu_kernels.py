"""The CPU's one-pass float32 GELU kernels (backends/cpu/activation.py) against a float64 reference of the exact
form, forward and backward, their edges (NaN, infinities, the erf clamp), and the generic body where they do
not apply (the tanh form, strided arrays, float64)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from helpers import kernel_launches
from minitensor.backends import get_backend
from minitensor.backends.cpu.numba_kernels import load
from minitensor.backends.generic.activation import ActivationOps

CPU = get_backend("cpu")
_erf = np.vectorize(math.erf)


def reference(x, gy):
    x = x.astype(np.float64)
    cdf = 0.5 * (1 + _erf(x / math.sqrt(2)))
    return x * cdf, gy * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))




def test_float32_forward_and_backward_match_the_float64_reference():
    r = np.random.default_rng(0)
    x = np.concatenate([r.standard_normal(20000) * 3, np.linspace(-6, 6, 1001), [0.0, -0.0, 3.8325, -3.8326]])
    x = x.astype(np.float32)
    gy = r.standard_normal(x.size).astype(np.float32)
    y_ref, gx_ref = reference(x, gy.astype(np.float64))
    y, gx = CPU.gelu(x, "none"), CPU.gelu_backward(gy, x, "none")
    assert y.dtype == gx.dtype == np.float32
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-5, atol=2e-6)


def test_the_kernels_run_for_float32_and_the_generic_body_elsewhere():
    x = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    gy = np.ones_like(x)
    launched = kernel_launches(lambda: (CPU.gelu(x, "none"), CPU.gelu_backward(gy, x, "none")))
    if load("activation") is None:
        assert launched == []  # no Numba: the NumPy body
        return
    assert launched == ["gelu", "gelu_backward"]
    others = kernel_launches(lambda: (CPU.gelu(x, "tanh"), CPU.gelu(x[:, ::2], "none"),
                                CPU.gelu(x.astype(np.float64), "none"), CPU.gelu_backward(gy, x, "tanh")))
    assert others == []
    y_ref, gx_ref = reference(x[:, ::2], gy[:, ::2])
    np.testing.assert_allclose(CPU.gelu(x[:, ::2], "none"), y_ref, rtol=1e-5, atol=2e-6)


def test_edges_as_the_generic_body():
    """NaN, infinities and values past the erf clamp give what the NumPy body gives (x = inf: x phi(x) is
    inf * 0, NaN, in both)."""
    x = np.array([np.nan, np.inf, -np.inf, 50.0, -50.0, 3.9, -3.9], np.float32)
    gy = np.ones_like(x)
    with np.errstate(invalid="ignore"):
        want_y, want_gx = ActivationOps.gelu(CPU, x, "none"), ActivationOps.gelu_backward(CPU, gy, x, "none")
        y, gx = CPU.gelu(x, "none"), CPU.gelu_backward(gy, x, "none")
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(gx, want_gx)
    assert y[3] == 50 and gx[4] == 0


def test_through_autograd_matches_the_reference():
    x = mt.tensor(np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32), requires_grad=True)
    y = mt.nn.functional.gelu(x)
    y.backward(mt.ones_like(y))
    y_ref, gx_ref = reference(x.detach().numpy(), np.ones((4, 5)))
    np.testing.assert_allclose(y.detach().numpy(), y_ref, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), gx_ref, rtol=1e-5, atol=2e-6)


@pytest.mark.torch
def test_against_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal(1000).astype(np.float32) * 4
    tx = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(tx).sum().backward()
    np.testing.assert_allclose(CPU.gelu(x, "none"), torch.nn.functional.gelu(torch.tensor(x)).numpy(),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(CPU.gelu_backward(np.ones_like(x), x, "none"), tx.grad.numpy(), rtol=1e-5,
                               atol=1e-6)
