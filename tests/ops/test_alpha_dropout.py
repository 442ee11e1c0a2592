"""F.alpha_dropout / feature_alpha_dropout and their modules: every output is one of the two affine images of
its input that PyTorch's formula allows, the kept fraction is 1 - p, a SELU network's mean and variance are
kept, whole channels go together in the feature form, and the identity / p = 1 / error cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

ALPHA = 1.7580993408473766


def affine(p: float) -> tuple[float, float, float]:
    """(a, the kept elements' shift, the dropped elements' value) of PyTorch's alpha dropout."""
    a = 1 / math.sqrt((ALPHA ** 2 * p + 1) * (1 - p))
    return a, ALPHA * a * p, ALPHA * a * (p - 1)


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_outputs_are_the_two_affine_images_and_the_statistics_hold(p):
    mt.manual_seed(0)
    x = mt.randn(200000, dtype=mt.float64)
    y = F.alpha_dropout(x, p, training=True).numpy()
    a, shift, dropped = affine(p)
    kept = np.isclose(y, a * x.numpy() + shift, rtol=0, atol=1e-12)
    assert np.all(kept | np.isclose(y, dropped, rtol=0, atol=1e-12))
    assert abs(kept.mean() - (1 - p)) < 0.01
    assert abs(y.mean()) < 0.02 and abs(y.var() - 1) < 0.02  # a standard normal stays standard


def test_gradient_is_the_kept_scale():
    mt.manual_seed(1)
    x = mt.randn(1000, dtype=mt.float64, requires_grad=True)
    y = F.alpha_dropout(x, 0.3, training=True)
    y.sum().backward()
    a, shift, _ = affine(0.3)
    kept = np.isclose(y.detach().numpy(), a * x.detach().numpy() + shift, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0))


def test_feature_form_drops_whole_channels_and_the_modules():
    mt.manual_seed(2)
    x = mt.randn(8, 16, 5, 5)
    y = F.feature_alpha_dropout(x, 0.5, training=True).numpy()
    _, _, dropped = affine(0.5)
    per_channel = np.isclose(y, dropped, atol=1e-6).reshape(8, 16, -1)
    assert np.all(per_channel.all(-1) | ~per_channel.any(-1))  # a channel is dropped whole or not at all
    m = mt.nn.AlphaDropout(0.2)
    assert repr(m) == "AlphaDropout(p=0.2, inplace=False)"
    m.eval()
    assert m(x) is x and F.alpha_dropout(x, 0.5) is x  # training defaults to False for the function
    assert mt.nn.FeatureAlphaDropout(0.3).train()(x).shape == x.shape


def test_edges():
    x = mt.tensor([1.0, float("nan"), -2.0])
    assert np.isnan(F.alpha_dropout(x, 1.0, training=True).numpy()[1])
    np.testing.assert_array_equal(F.alpha_dropout(x, 1.0, training=True).numpy()[[0, 2]], [0.0, 0.0])
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.alpha_dropout(x, 1.5, training=True)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(x, 0.5, training=True)
    y = x.clone()
    assert F.alpha_dropout(y, 0.5, training=True, inplace=True) is y
