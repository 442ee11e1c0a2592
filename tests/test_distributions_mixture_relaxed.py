"""MixtureSameFamily, the relaxed distributions and OneHotCategoricalStraightThrough against float64
references (SciPy densities mixed in NumPy, the Concrete density written out), sample statistics with fixed
seeds, finite-difference gradients, and (marked torch) torch.distributions on the same parameters."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import minitensor as mt
import minitensor.distributions as D
from minitensor.distributions.relaxed import ExpRelaxedCategorical, LogitRelaxedBernoulli
from minitensor.testing import gradcheck

N = 50_000
W = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
LOC = np.array([[-1.0, 0.0, 2.0], [1.0, 2.0, 3.0]])
SCALE = np.array([[0.5, 1.0, 2.0], [1.0, 1.0, 0.3]])


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def _mixture(w, loc, scale):
    return D.MixtureSameFamily(D.Categorical(logits=w), D.Normal(loc, scale))


def test_mixture_matches_numpy():
    d = _mixture(t64(np.log(W)), t64(LOC), t64(SCALE))
    assert d.batch_shape == (2,) and d.event_shape == ()
    x = np.array([[0.3, -1.0], [2.0, 2.5]])
    comp = stats.norm(LOC, SCALE)
    want = special.logsumexp(comp.logpdf(x[..., None]) + np.log(W), axis=-1)
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(d.cdf(t64(x)).numpy(), (comp.cdf(x[..., None]) * W).sum(-1), rtol=1e-12)
    mean = (W * LOC).sum(-1)
    np.testing.assert_allclose(d.mean.numpy(), mean, rtol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), (W * (SCALE ** 2 + LOC ** 2)).sum(-1) - mean ** 2, rtol=1e-12)
    leaves = [t64(np.log(W), grad=True), t64(LOC, grad=True), t64(SCALE, grad=True)]
    gradcheck(lambda *p: _mixture(*p).log_prob(t64(x)), leaves)
    gradcheck(lambda *p: _mixture(*p).cdf(t64(x)), leaves)


def test_mixture_samples_and_shapes():
    d = _mixture(t64(np.log(W)), t64(LOC), t64(SCALE))
    mt.manual_seed(3)
    s = d.sample((N,)).numpy()
    assert s.shape == (N, 2)
    for i in range(2):
        cdf = lambda x, i=i: (stats.norm(LOC[i], SCALE[i]).cdf(np.asarray(x)[..., None]) * W[i]).sum(-1)  # noqa: E731
        assert stats.kstest(s[:, i], cdf).pvalue > 1e-3
    assert d.expand((3, 2)).sample((4,)).shape == (4, 3, 2)
    # One mixture for every batch row, and components with events (Independent Normals).
    d2 = D.MixtureSameFamily(D.Categorical(t64([0.3, 0.7])),
                             D.Independent(D.Normal(t64([[0.0, 1.0], [2.0, 3.0]]), t64([[1.0, 2.0], [0.5, 1.0]])), 1))
    assert d2.batch_shape == () and d2.event_shape == (2,)
    assert d2.sample((5,)).shape == (5, 2) and d2.log_prob(t64(np.zeros((4, 2)))).shape == (4,)
    np.testing.assert_allclose(d2.mean.numpy(), 0.3 * np.array([0.0, 1.0]) + 0.7 * np.array([2.0, 3.0]))
    # One mixture shared by a batch of 4 component pairs (PyTorch's sample refuses this shape).
    shared = D.MixtureSameFamily(D.Categorical(t64([0.3, 0.7])), D.Normal(t64(np.zeros((4, 2))), t64([[1.0, 9.0]] * 4)))
    mt.manual_seed(5)
    draws = shared.sample((N,)).numpy()
    assert draws.shape == (N, 4)
    # the variance estimate's relative sd: sqrt((kurtosis 4.2 - 1) / N) = 0.8%
    np.testing.assert_allclose(draws.var(0), 0.3 + 0.7 * 81, rtol=0.05)
    with pytest.raises(ValueError, match="Categorical"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t64(LOC), t64(SCALE)))
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(t64([0.5, 0.5])), D.Normal(t64(LOC), t64(SCALE)))
    with pytest.raises(ValueError, match="support"):
        D.MixtureSameFamily(D.Categorical(t64([0.5, 0.5])), D.Exponential(t64([1.0, 2.0]))).log_prob(t64(-1.0))


def test_relaxed_bernoulli():
    t, p = 0.7, np.array([0.2, 0.6])
    logit = np.log(p / (1 - p))
    y = np.array([0.3, 0.9])
    for d in (D.RelaxedBernoulli(t64(t), t64(p)), D.RelaxedBernoulli(t64(t), logits=t64(logit))):
        ref = stats.logistic(logit / t, 1 / t)  # the logit of a relaxed Bernoulli is logistic
        want = ref.logpdf(np.log(y / (1 - y))) - np.log(y * (1 - y))
        np.testing.assert_allclose(d.log_prob(t64(y)).numpy(), want, rtol=1e-10)
        np.testing.assert_allclose(LogitRelaxedBernoulli(t64(t), t64(p)).log_prob(t64([0.3, -2.0])).numpy(),
                                   ref.logpdf([0.3, -2.0]), rtol=1e-10)
        assert d.has_rsample and d.batch_shape == (2,)
    mt.manual_seed(1)
    s = D.RelaxedBernoulli(t64(t), t64(p)).sample((N,)).numpy()
    for i in range(2):
        assert stats.kstest(np.log(s[:, i] / (1 - s[:, i])), stats.logistic(logit[i] / t, 1 / t).cdf).pvalue > 1e-3
    leaves = [t64(t, grad=True), t64(p, grad=True)]
    gradcheck(lambda a, b: D.RelaxedBernoulli(a, b).log_prob(t64(y)), leaves)

    def rsample(a, b):
        mt.manual_seed(2)
        return D.RelaxedBernoulli(a, b).rsample((3,))
    gradcheck(rsample, leaves)


def _concrete_log_density(x, p, t):
    """(K - 1)! t^(K-1) prod(p_k x_k^(-t-1)) / (sum p_k x_k^(-t))^K (Maddison et al., 2017)."""
    k = x.shape[-1]
    return (special.gammaln(k) + (k - 1) * np.log(t) + (np.log(p) - (t + 1) * np.log(x)).sum(-1)
            - k * special.logsumexp(np.log(p) - t * np.log(x), axis=-1))


def test_relaxed_one_hot_categorical():
    t, p = 0.7, np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    x = np.array([[0.2, 0.7, 0.1], [0.05, 0.05, 0.9]])
    d = D.RelaxedOneHotCategorical(t64(t), t64(p))
    assert d.batch_shape == (2,) and d.event_shape == (3,) and d.has_rsample
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), _concrete_log_density(x, p, t), rtol=1e-10)
    np.testing.assert_allclose(ExpRelaxedCategorical(t64(t), t64(p)).log_prob(t64(np.log(x))).numpy(),
                               _concrete_log_density(x, p, t) + np.log(x).sum(-1), rtol=1e-10)
    mt.manual_seed(4)
    s = d.sample((N,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    for i in range(2):  # the argmax of a Concrete sample is Categorical(p) at any temperature (Gumbel-max)
        counts = np.bincount(s[:, i].argmax(-1), minlength=3)
        assert stats.chisquare(counts, N * p[i]).pvalue > 1e-3
    leaves = [t64(t, grad=True), t64(p, grad=True)]
    gradcheck(lambda a, b: D.RelaxedOneHotCategorical(a, b).log_prob(t64(x)), leaves)

    def rsample(a, b):
        mt.manual_seed(2)
        return D.RelaxedOneHotCategorical(a, logits=b).rsample((3,))
    gradcheck(rsample, [t64(t, grad=True), t64(np.log(p), grad=True)])


def test_one_hot_straight_through():
    probs = t64([[0.2, 0.8], [0.5, 0.5]], grad=True)
    d = D.OneHotCategoricalStraightThrough(probs)
    assert d.has_rsample and isinstance(d, D.OneHotCategorical)
    mt.manual_seed(0)
    s = d.rsample((4,))
    assert s.shape == (4, 2, 2) and (s.detach().sum(-1) == 1).all().item()
    assert ((s.detach() == 0) | (s.detach() == 1)).all().item()
    w = t64(np.random.default_rng(0).standard_normal((4, 2, 2)))
    (s * w).sum().backward()
    got = probs.grad.numpy().copy()
    probs.grad = None
    (D.OneHotCategorical(probs).probs * w.sum(0)).sum().backward()  # the gradient of the probabilities
    np.testing.assert_allclose(got, probs.grad.numpy(), rtol=1e-12)


@pytest.mark.torch
def test_against_torch():
    torch = pytest.importorskip("torch")
    import torch.distributions.relaxed_bernoulli as trb
    import torch.distributions.relaxed_categorical as trc

    x = np.array([[0.3, -1.0], [2.0, 2.5]])
    for lib, dist in ((mt, D), (torch, torch.distributions)):
        m = dist.MixtureSameFamily(dist.Categorical(lib.tensor(W)), dist.Normal(lib.tensor(LOC), lib.tensor(SCALE)))
        values = [m.log_prob(lib.tensor(x)), m.cdf(lib.tensor(x)), m.mean, m.variance]
        if lib is mt:
            ours = [v.numpy() for v in values]
        else:
            for a, b in zip(ours, values):
                np.testing.assert_allclose(a, b.numpy(), rtol=1e-12)
    t, p = 0.7, np.array([[0.2, 0.3, 0.5]])
    cases = [(LogitRelaxedBernoulli, trb.LogitRelaxedBernoulli, p[0, :2], [0.3, -2.0]),
             (D.RelaxedBernoulli, trb.RelaxedBernoulli, p[0, :2], [0.3, 0.9]),
             (ExpRelaxedCategorical, trc.ExpRelaxedCategorical, p, np.log([[0.2, 0.7, 0.1]])),
             (D.RelaxedOneHotCategorical, trc.RelaxedOneHotCategorical, p, [[0.2, 0.7, 0.1]])]
    for ours_cls, theirs_cls, probs, value in cases:
        a = ours_cls(t64(t), t64(probs)).log_prob(t64(value)).numpy()
        b = theirs_cls(torch.tensor(t, dtype=torch.float64), torch.tensor(probs)).log_prob(
            torch.tensor(np.asarray(value, dtype=np.float64))).numpy()
        np.testing.assert_allclose(a, b, rtol=1e-10)
