"""F.gumbel_softmax: a distribution along dim whose argmax frequencies follow softmax(logits), the hard form's
one-hot forward and straight-through gradient, and the temperature."""
from __future__ import annotations

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F


def test_soft_samples_are_distributions_and_their_argmax_follows_the_softmax():
    mt.manual_seed(0)
    logits = mt.tensor([1.0, 0.0, -1.0, 2.0])
    y = F.gumbel_softmax(logits.expand(40000, 4), tau=0.5)
    np.testing.assert_allclose(y.sum(-1).numpy(), 1, rtol=1e-5)
    freq = np.bincount(y.argmax(-1).numpy(), minlength=4) / 40000
    want = np.exp([1.0, 0.0, -1.0, 2.0]) / np.exp([1.0, 0.0, -1.0, 2.0]).sum()  # the Gumbel-max trick
    np.testing.assert_allclose(freq, want, atol=0.01)


def test_hard_is_one_hot_with_the_soft_gradient():
    mt.manual_seed(1)
    logits = mt.randn(5, 3, 6, requires_grad=True)
    w = mt.randn(5, 3, 6)
    mt.manual_seed(7)
    y = F.gumbel_softmax(logits, tau=0.7, hard=True, dim=1)
    assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
    np.testing.assert_array_equal(y.detach().sum(1).numpy(), np.ones((5, 6)))
    (y * w).sum().backward()
    mt.manual_seed(7)
    soft_logits = logits.detach().requires_grad_()
    (F.gumbel_softmax(soft_logits, tau=0.7, dim=1) * w).sum().backward()  # the same noise: the same draws
    np.testing.assert_allclose(logits.grad.numpy(), soft_logits.grad.numpy(), rtol=1e-6)
