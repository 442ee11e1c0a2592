"""F.local_response_norm / nn.LocalResponseNorm against a float64 loop over the channel window, gradcheck,
the errors, and PyTorch (marked)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F


def reference(x: np.ndarray, size: int, alpha: float, beta: float, k: float) -> np.ndarray:
    """x_c / (k + alpha / size * sum_{c' in [c - size//2, c + (size-1)//2]} x_c'^2) ^ beta, in float64."""
    x = x.astype(np.float64)
    sq = x * x
    out = np.empty_like(x)
    channels = x.shape[1]
    for c in range(channels):
        lo, hi = max(0, c - size // 2), min(channels, c + (size - 1) // 2 + 1)
        out[:, c] = x[:, c] / (k + alpha / size * sq[:, lo:hi].sum(axis=1)) ** beta
    return out


@pytest.mark.parametrize("shape", [(2, 7, 5), (2, 6, 3, 4), (1, 5, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_matches_the_channel_window_reference(shape, size):
    x = np.random.default_rng(size).standard_normal(shape).astype(np.float32) * 3
    y = F.local_response_norm(mt.tensor(x), size, alpha=0.05, beta=0.75, k=1.5)
    np.testing.assert_allclose(y.numpy(), reference(x, size, 0.05, 0.75, 1.5), rtol=2e-6, atol=1e-7)
    module = mt.nn.LocalResponseNorm(size, alpha=0.05, beta=0.75, k=1.5)
    np.testing.assert_array_equal(module(mt.tensor(x)).numpy(), y.numpy())


def test_gradient_and_errors():
    x = mt.tensor(np.random.default_rng(0).standard_normal((2, 5, 3)), dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradcheck(lambda t: F.local_response_norm(t, 3, 0.1, 0.75, 1.0), (x,))
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(mt.randn(2, 3), 2)
    empty = mt.randn(0, 3, 4)
    assert F.local_response_norm(empty, 2) is empty
    assert repr(mt.nn.LocalResponseNorm(3)) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"


@pytest.mark.torch
@pytest.mark.parametrize("shape,size", [((2, 8, 5, 5), 5), ((3, 4, 6), 2), ((1, 6, 2, 2, 3), 3)])
def test_matches_pytorch_forward_and_backward(shape, size):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    ours = mt.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y, ty = F.local_response_norm(ours, size, 2e-2), torch.nn.functional.local_response_norm(theirs, size, 2e-2)
    g = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    y.backward(mt.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4, atol=1e-5)
