"""The CPU's float32 layer norm kernels (backends/cpu/normalization.py) against a float64 NumPy reference,
forward and backward, with and without the affine parameters, over one and two normalised dims; the generic
body where they do not apply."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from helpers import kernel_launches
from minitensor.backends import get_backend
from minitensor.backends.cpu.numba_kernels import load

CPU = get_backend("cpu")


def reference(x, w, b, k, eps, gy):
    """float64 (y, mean, invstd, gx, gw, gb) over the last k dims."""
    x, gy = x.astype(np.float64), gy.astype(np.float64)
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    w64 = np.ones(x.shape[-k:]) if w is None else w.astype(np.float64)
    b64 = np.zeros(x.shape[-k:]) if b is None else b.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    invstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    x_hat = (x - mean) * invstd
    g = gy * w64
    gx = invstd * (g - g.mean(axis=axes, keepdims=True) - x_hat * (g * x_hat).mean(axis=axes, keepdims=True))
    return x_hat * w64 + b64, mean, invstd, gx, (gy * x_hat).sum(axis=lead), gy.sum(axis=lead)




@pytest.mark.parametrize("k, affine", [(1, "weight"), (1, "both"), (1, "none"), (2, "both")])
def test_forward_and_backward_match_the_float64_reference(k, affine):
    r = np.random.default_rng(k)
    x = (r.standard_normal((6, 7, 40)) * 3 + 2).astype(np.float32)
    shape = x.shape[-k:]
    w = r.standard_normal(shape).astype(np.float32) if affine != "none" else None
    b = r.standard_normal(shape).astype(np.float32) if affine == "both" else None
    gy = r.standard_normal(x.shape).astype(np.float32)
    want = reference(x, w, b, k, 1e-5, gy)
    got: list = []
    launched = kernel_launches(lambda: got.extend(CPU.layer_norm_forward(x, w, b, k, 1e-5)))
    y, mean, invstd = got
    grads = CPU.layer_norm_backward(gy, x, w, mean, invstd, k, (True, w is not None, b is not None))
    for have, ref in zip((y, mean, invstd), want[:3]):
        assert have.dtype == np.float32 and have.shape == ref.shape
        np.testing.assert_allclose(have, ref, rtol=2e-5, atol=2e-5)
    for have, ref, needed in zip(grads, want[3:], (True, w is not None, b is not None)):
        if not needed:
            assert have is None
            continue
        assert have.dtype == np.float32 and have.shape == ref.shape
        np.testing.assert_allclose(have, ref, rtol=1e-4, atol=1e-4)
    assert launched == ([] if load("normalization") is None else ["layer_norm"])


def test_the_generic_body_serves_float64_and_strided_input():
    x = np.random.default_rng(0).standard_normal((4, 10))
    assert kernel_launches(lambda: CPU.layer_norm_forward(x, None, None, 1, 1e-5)) == []
    assert kernel_launches(lambda: CPU.layer_norm_forward(x.astype(np.float32)[:, ::2], None, None, 1, 1e-5)) == []


def test_nn_layer_norm_through_autograd():
    mt.manual_seed(0)
    ln = mt.nn.LayerNorm(16, bias=False)
    x = mt.randn(3, 5, 16, requires_grad=True)
    y = ln(x)
    gy = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    y.backward(mt.tensor(gy))
    want = reference(x.detach().numpy(), ln.weight.detach().numpy(), None, 1, 1e-5, gy)
    np.testing.assert_allclose(y.detach().numpy(), want[0], rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(x.grad.numpy(), want[3], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ln.weight.grad.numpy(), want[4], rtol=1e-4, atol=1e-4)
