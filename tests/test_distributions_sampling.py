"""Samples of minitensor.distributions, with fixed seeds: their moments and laws against the distributions'
own (bounds of a few standard errors, Kolmogorov-Smirnov and chi-square tests that a wrong sampler fails),
reproducibility under manual_seed, and reparameterised gradients."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import minitensor as mt
import minitensor.distributions as D

N = 100_000

CONTINUOUS = {
    "Normal": (D.Normal(mt.tensor([-1.0, 2.0]), mt.tensor([0.5, 3.0])), lambda i: stats.norm([-1.0, 2.0][i],
                                                                                              [0.5, 3.0][i])),
    "Laplace": (D.Laplace(mt.tensor([-1.0, 2.0]), mt.tensor([0.5, 3.0])), lambda i: stats.laplace([-1.0, 2.0][i],
                                                                                                  [0.5, 3.0][i])),
    "Uniform": (D.Uniform(mt.tensor([-1.0, 2.0]), mt.tensor([0.5, 7.0])), lambda i: stats.uniform([-1.0, 2.0][i],
                                                                                                  [1.5, 5.0][i])),
    "Exponential": (D.Exponential(mt.tensor([0.5, 4.0])), lambda i: stats.expon(scale=[2.0, 0.25][i])),
}


@pytest.mark.parametrize("name", CONTINUOUS)
def test_continuous_samples_follow_the_law(name):
    d, twin = CONTINUOUS[name]
    mt.manual_seed(11)
    x = d.sample((N,)).numpy().astype(np.float64)
    assert x.shape == (N, 2) and d.sample().dtype == mt.float32
    for i in range(2):
        ref = twin(i)
        assert abs(x[:, i].mean() - ref.mean()) < 5 * ref.std() / np.sqrt(N)
        assert abs(x[:, i].var() / ref.var() - 1) < 0.03
        assert stats.kstest(x[:, i], ref.cdf).pvalue > 1e-3
    support = d.support.check(mt.tensor(x))
    assert support.all().item()


def test_bernoulli_and_categorical_frequencies():
    mt.manual_seed(12)
    b = D.Bernoulli(logits=mt.tensor([-2.0, 0.0, 1.0])).sample((N,)).numpy()
    p = 1 / (1 + np.exp(-np.array([-2.0, 0.0, 1.0])))
    assert set(np.unique(b)) <= {0.0, 1.0}
    assert (np.abs(b.mean(0) - p) < 5 * np.sqrt(p * (1 - p) / N)).all()
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    c = D.Categorical(mt.tensor(probs)).sample((N,)).numpy()
    assert c.shape == (N, 2) and c.dtype == np.int64
    counts = np.stack([np.bincount(c[:, i], minlength=3) for i in range(2)])
    assert counts[1, 1] == 0  # a zero probability is never drawn
    assert stats.chisquare(counts[0], N * probs[0]).pvalue > 1e-3
    assert stats.chisquare(counts[1, [0, 2]], N * probs[1, [0, 2]]).pvalue > 1e-3
    one_hot = D.OneHotCategorical(mt.tensor(probs[0])).sample((N,)).numpy()
    assert stats.chisquare(one_hot.sum(0), N * probs[0]).pvalue > 1e-3


def test_multivariate_normal_samples_have_the_covariance():
    cov = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 1.5]])
    mt.manual_seed(13)
    for kw in ({"covariance_matrix": cov}, {"precision_matrix": np.linalg.inv(cov)}):
        d = D.MultivariateNormal(mt.tensor([1.0, -1.0, 0.0], dtype=mt.float64),
                                 **{k: mt.tensor(v) for k, v in kw.items()})
        x = d.sample((N,)).numpy()
        assert x.shape == (N, 3)
        np.testing.assert_allclose(x.mean(0), [1.0, -1.0, 0.0], atol=5 * np.sqrt(2.0 / N))
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)


@pytest.mark.parametrize("make", [
    lambda: D.Normal(mt.zeros(3), 1.0), lambda: D.Laplace(0.0, 2.0), lambda: D.Uniform(0.0, mt.ones(2)),
    lambda: D.Exponential(mt.ones(2)), lambda: D.Bernoulli(mt.full((3,), 0.5)), lambda: D.Categorical(mt.ones(4)),
    lambda: D.OneHotCategorical(mt.ones(4)), lambda: D.MultivariateNormal(mt.zeros(2), mt.eye(2)),
    lambda: D.Independent(D.Normal(mt.zeros(2, 2), 1.0), 1),
], ids=["Normal", "Laplace", "Uniform", "Exponential", "Bernoulli", "Categorical", "OneHotCategorical",
        "MultivariateNormal", "Independent"])
def test_manual_seed_repeats_samples(make):
    d = make()
    mt.manual_seed(7)
    a = d.sample((50,))
    mt.manual_seed(7)
    b = d.sample((50,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), d.sample((50,)).numpy())
    assert tuple(a.shape) == (50, *d.batch_shape, *d.event_shape)


def test_rsample_is_differentiable_and_sample_is_not():
    loc = mt.tensor([0.0, 1.0], requires_grad=True)
    scale = mt.tensor([1.0, 2.0], requires_grad=True)
    d = D.Normal(loc, scale)
    assert not d.sample((3,)).requires_grad
    mt.manual_seed(4)
    x = d.rsample((3,))
    x.sum().backward()
    mt.manual_seed(4)
    eps = mt.randn(3, 2)
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.detach().numpy(), (loc + eps * scale).detach().numpy(), rtol=1e-6)
    for d in (D.Bernoulli(0.5), D.Categorical(mt.ones(2))):
        assert not d.has_rsample
        with pytest.raises(NotImplementedError):
            d.rsample()


def test_samples_and_scores_stay_on_the_parameters_device(device):
    loc = mt.zeros(3, device=device)
    cov = mt.eye(3, device=device)
    for d in (D.Normal(loc, 1.0), D.Laplace(loc, 2.0), D.Uniform(loc, 1.0), D.Exponential(loc + 1),
              D.Bernoulli(logits=loc), D.Categorical(logits=loc), D.OneHotCategorical(logits=loc),
              D.MultivariateNormal(loc, cov)):
        x = d.sample((4,))
        assert x.device == device and d.log_prob(x).device == device and d.entropy().device == device
