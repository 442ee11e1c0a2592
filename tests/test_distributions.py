"""minitensor.distributions against float64 references: SciPy's densities, cdfs, quantiles and entropies, the
KL divergences written out in NumPy, and finite-difference gradients (minitensor.testing.gradcheck) of
log_prob, entropy, cdf, icdf, rsample and kl_divergence with respect to the parameters."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import minitensor as mt
import minitensor.distributions as D
from minitensor.testing import gradcheck

COV = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 1.5]])
MU = np.array([0.5, -1.0, 2.0])


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


# name: (make(params...) -> distribution, float64 parameters, values inside the support, the SciPy twin)
UNIVARIATE = {
    "Normal": (D.Normal, ([-1.0, 0.5, 2.0], [0.5, 1.0, 2.0]), [0.3, -1.0, 4.0],
               lambda a, b: stats.norm(a, b)),
    "Laplace": (D.Laplace, ([-1.0, 0.5, 2.0], [0.5, 1.0, 2.0]), [0.3, -1.0, 4.0],
                lambda a, b: stats.laplace(a, b)),
    "Uniform": (D.Uniform, ([-1.0, 0.0, 2.0], [0.5, 3.0, 2.5]), [0.2, 2.9, 2.2],
                lambda a, b: stats.uniform(a, b - a)),
    "Exponential": (D.Exponential, ([0.5, 1.0, 3.0],), [0.2, 1.0, 2.5], lambda r: stats.expon(scale=1 / r)),
}


@pytest.mark.parametrize("name", UNIVARIATE)
def test_univariate_values_match_scipy(name):
    make, params, value, twin = UNIVARIATE[name]
    d, ref = make(*map(t64, params)), twin(*map(np.asarray, params))
    v = t64(value)
    np.testing.assert_allclose(d.log_prob(v).numpy(), ref.logpdf(value), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(v).numpy(), ref.cdf(value), rtol=1e-12)
    q = np.array([0.1, 0.5, 0.97])
    np.testing.assert_allclose(d.icdf(t64(q)).numpy(), ref.ppf(q), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-12)
    np.testing.assert_allclose(d.mean.numpy(), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), ref.var(), rtol=1e-12)
    np.testing.assert_allclose(d.stddev.numpy(), ref.std(), rtol=1e-12)
    assert d.batch_shape == (3,) and d.event_shape == () and d.has_rsample


@pytest.mark.parametrize("name", UNIVARIATE)
def test_univariate_gradients_match_finite_differences(name):
    make, params, value, _ = UNIVARIATE[name]
    leaves = [t64(p, grad=True) for p in params]
    v, q = t64(value), t64([0.1, 0.5, 0.97])
    gradcheck(lambda *p: make(*p).log_prob(v), leaves)
    gradcheck(lambda *p: make(*p).entropy(), leaves)
    gradcheck(lambda *p: make(*p).cdf(v), leaves)
    gradcheck(lambda *p: make(*p).icdf(q), leaves)
    gradcheck(lambda *p: make(*p).mean + make(*p).variance, leaves)

    def rsample(*p):
        mt.manual_seed(3)  # the same noise at every evaluation: the sample is then a function of the parameters
        return make(*p).rsample((4,))
    gradcheck(rsample, leaves)


def test_bernoulli_values_and_gradients():
    p = np.array([0.2, 0.5, 0.9])
    value = np.array([0.0, 1.0, 1.0])
    for d in (D.Bernoulli(t64(p)), D.Bernoulli(logits=t64(np.log(p / (1 - p))))):
        np.testing.assert_allclose(d.log_prob(t64(value)).numpy(), stats.bernoulli(p).logpmf(value), rtol=1e-9)
        np.testing.assert_allclose(d.entropy().numpy(), stats.bernoulli(p).entropy(), rtol=1e-9)
        np.testing.assert_allclose(d.probs.numpy(), p, rtol=1e-12)
        np.testing.assert_allclose(d.variance.numpy(), p * (1 - p), rtol=1e-9)
        np.testing.assert_array_equal(d.mode.numpy(), [0.0, np.nan, 1.0])
    for kw in ("probs", "logits"):
        x = t64([0.2, 0.7, 0.9] if kw == "probs" else [-1.0, 0.3, 2.0], grad=True)
        gradcheck(lambda x: D.Bernoulli(**{kw: x}).log_prob(t64(value)), [x])
        gradcheck(lambda x: D.Bernoulli(**{kw: x}).entropy(), [x])


def test_categorical_values_and_gradients():
    w = np.array([[1.0, 2.0, 5.0], [3.0, 3.0, 1.0]])
    p = w / w.sum(-1, keepdims=True)
    value = mt.tensor([2, 0])
    for d in (D.Categorical(t64(w)), D.Categorical(logits=t64(np.log(w) + 7.0))):
        np.testing.assert_allclose(d.probs.numpy(), p, rtol=1e-12)
        np.testing.assert_allclose(d.logits.numpy(), np.log(p), rtol=1e-12)
        np.testing.assert_allclose(d.log_prob(value).numpy(), np.log([p[0, 2], p[1, 0]]), rtol=1e-12)
        np.testing.assert_allclose(d.entropy().numpy(), -(p * np.log(p)).sum(-1), rtol=1e-12)
        np.testing.assert_array_equal(d.mode.numpy(), [2, 0])
        assert d.batch_shape == (2,) and d.event_shape == () and np.isnan(d.mean.numpy()).all()
    # One value broadcast against the batch; a batch of values against one distribution.
    assert D.Categorical(t64(w)).log_prob(mt.tensor([[1], [2]])).shape == (2, 2)
    gradcheck(lambda x: D.Categorical(x).log_prob(value), [t64(w, grad=True)])
    gradcheck(lambda x: D.Categorical(logits=x).entropy(), [t64(np.log(w), grad=True)])
    # A zero probability: its term of the entropy is 0, not NaN.
    np.testing.assert_allclose(D.Categorical(t64([0.0, 1.0, 1.0])).entropy().item(), np.log(2), rtol=1e-12)


def test_one_hot_categorical():
    w = t64([[1.0, 2.0, 5.0], [3.0, 3.0, 1.0]])
    d, c = D.OneHotCategorical(w), D.Categorical(w)
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    v = mt.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], dtype=mt.float64)
    np.testing.assert_allclose(d.log_prob(v).numpy(), c.log_prob(mt.tensor([2, 0])).numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), c.entropy().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(d.mode.numpy(), [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(d.variance.numpy(), (c.probs * (1 - c.probs)).numpy())
    s = d.sample((5,))
    assert s.shape == (5, 2, 3) and s.dtype == mt.float64 and (s.sum(-1) == 1).all().item()
    with pytest.raises(ValueError, match="support"):
        d.log_prob(mt.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], dtype=mt.float64))


def _mvn(name, loc, matrix):
    """The matrix is read through its lower triangle (symmetrised, or the factor itself): finite differences
    then move one free entry at a time, inside the constraint."""
    lower = matrix.tril()
    return D.MultivariateNormal(loc, **{name: lower if name == "scale_tril" else lower + lower.tril(-1).mT})


MVN_FORMS = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV),
             "scale_tril": np.linalg.cholesky(COV)}


@pytest.mark.parametrize("form", MVN_FORMS)
def test_multivariate_normal_matches_scipy(form):
    d = _mvn(form, t64(MU), t64(MVN_FORMS[form]))
    ref = stats.multivariate_normal(MU, COV)
    x = np.random.default_rng(0).standard_normal((4, 2, 3))
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), ref.logpdf(x), rtol=1e-10)
    np.testing.assert_allclose(d.entropy().item(), ref.entropy(), rtol=1e-12)
    np.testing.assert_allclose(d.covariance_matrix.numpy(), COV, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(COV), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d.scale_tril.numpy(), np.linalg.cholesky(COV), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), np.diag(COV), rtol=1e-10)
    np.testing.assert_allclose(d.mean.numpy(), MU)
    leaves = [t64(MU, grad=True), t64(MVN_FORMS[form], grad=True)]
    gradcheck(lambda m, a: _mvn(form, m, a).log_prob(t64(x)), leaves)
    gradcheck(lambda m, a: _mvn(form, m, a).entropy(), leaves)


def test_multivariate_normal_batches_broadcast_without_copies_of_the_factor():
    """A batch of two factors, values of shape (5, 1, 3) and (5, 2, 3): the Mahalanobis term is right for
    each pair, as SciPy gives it one pair at a time."""
    covs = np.stack([COV, np.diag([1.0, 2.0, 0.5])])
    locs = np.stack([MU, -MU])
    d = D.MultivariateNormal(t64(locs), t64(covs))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.random.default_rng(1).standard_normal((5, 2, 3))
    want = np.stack([stats.multivariate_normal(locs[i], covs[i]).logpdf(x[:, i]) for i in range(2)], 1)
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), want, rtol=1e-10)
    one = D.MultivariateNormal(t64(MU), t64(COV)).expand((2,))
    np.testing.assert_allclose(one.log_prob(t64(x)).numpy(), stats.multivariate_normal(MU, COV).logpdf(x),
                               rtol=1e-10)

    def rsample(m, a):
        mt.manual_seed(5)
        return D.MultivariateNormal(m, scale_tril=a.tril()).rsample((3,))
    gradcheck(rsample, [t64(locs, grad=True), t64(np.linalg.cholesky(covs), grad=True)])


def test_independent_sums_the_reinterpreted_dims():
    loc, scale = t64(np.arange(6.0).reshape(2, 3)), t64(np.linspace(0.5, 2, 6).reshape(2, 3))
    base = D.Normal(loc, scale)
    d = D.Independent(base, 1)
    assert (d.batch_shape, d.event_shape) == ((2,), (3,))
    x = t64(np.random.default_rng(2).standard_normal((4, 2, 3)))
    np.testing.assert_allclose(d.log_prob(x).numpy(), base.log_prob(x).sum(-1).numpy(), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), base.entropy().sum(-1).numpy(), rtol=1e-12)
    assert D.Independent(base, 2).log_prob(x).shape == (4,)
    assert d.has_rsample and d.rsample((7,)).shape == (7, 2, 3)
    e = d.expand((5, 2))
    assert (e.batch_shape, e.event_shape, e.base_dist.batch_shape) == ((5, 2), (3,), (5, 2, 3))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims <= len"):
        D.Independent(base, 3)


def test_kl_divergences_match_their_closed_forms():
    a, b = np.array([0.3, -1.0]), np.array([0.7, 2.0])
    sa, sb = np.array([0.5, 1.5]), np.array([2.0, 0.4])
    kl = D.kl_divergence
    np.testing.assert_allclose(kl(D.Normal(t64(a), t64(sa)), D.Normal(t64(b), t64(sb))).numpy(),
                               np.log(sb / sa) + (sa ** 2 + (a - b) ** 2) / (2 * sb ** 2) - 0.5, rtol=1e-12)
    d = np.abs(a - b)
    np.testing.assert_allclose(kl(D.Laplace(t64(a), t64(sa)), D.Laplace(t64(b), t64(sb))).numpy(),
                               np.log(sb / sa) + d / sb + sa / sb * np.exp(-d / sa) - 1, rtol=1e-12)
    np.testing.assert_allclose(kl(D.Exponential(t64(sa)), D.Exponential(t64(sb))).numpy(),
                               np.log(sa / sb) + sb / sa - 1, rtol=1e-12)
    np.testing.assert_allclose(kl(D.Uniform(t64([0.0, 0.0]), t64([1.0, 2.0])),
                                  D.Uniform(t64([-1.0, 0.5]), t64([3.0, 3.0]))).numpy(), [np.log(4.0), np.inf])
    p, q = np.array([0.2, 0.0, 1.0]), np.array([0.6, 0.3, 0.0])
    want = np.array([0.2 * np.log(0.2 / 0.6) + 0.8 * np.log(0.8 / 0.4), np.log(1 / 0.7), np.inf])
    np.testing.assert_allclose(kl(D.Bernoulli(t64(p)), D.Bernoulli(t64(q))).numpy(), want, rtol=1e-9)
    P, Q = np.array([[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]]), np.array([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]])
    want = np.array([0.2 * np.log(2) + 0.8 * np.log(0.8 / 0.3), np.inf])
    np.testing.assert_allclose(kl(D.Categorical(t64(P)), D.Categorical(t64(Q))).numpy(), want, rtol=1e-9)
    np.testing.assert_allclose(kl(D.OneHotCategorical(t64(P)), D.OneHotCategorical(t64(Q))).numpy(), want, rtol=1e-9)
    cov_q = np.diag([1.0, 2.0, 0.5]) + 0.1
    inv_q = np.linalg.inv(cov_q)
    want = 0.5 * (np.trace(inv_q @ COV) + (-MU) @ inv_q @ (-MU) - 3 + np.log(np.linalg.det(cov_q) / np.linalg.det(COV)))
    got = kl(D.MultivariateNormal(t64(MU), t64(COV)), D.MultivariateNormal(t64(np.zeros(3)), t64(cov_q)))
    np.testing.assert_allclose(got.item(), want, rtol=1e-10)
    ind = kl(D.Independent(D.Normal(t64(a), t64(sa)), 1), D.Independent(D.Normal(t64(b), t64(sb)), 1))
    np.testing.assert_allclose(ind.item(), kl(D.Normal(t64(a), t64(sa)), D.Normal(t64(b), t64(sb))).sum().item())


KL_PAIRS = {
    "Normal": (lambda x, y: D.Normal(x[0], x[1]), [[0.3, -1.0], [0.5, 1.5]], [[0.7, 2.0], [2.0, 0.4]]),
    "Laplace": (lambda x, y: D.Laplace(x[0], x[1]), [[0.3, -1.0], [0.5, 1.5]], [[0.7, 2.0], [2.0, 0.4]]),
    "Exponential": (lambda x, y: D.Exponential(x), [0.5, 1.5], [2.0, 0.4]),
    "Uniform": (lambda x, y: D.Uniform(x[0], x[1]), [[0.0, 0.1], [1.0, 2.0]], [[-1.0, 0.0], [3.0, 3.0]]),
    "Bernoulli": (lambda x, y: D.Bernoulli(logits=x), [0.3, -1.0], [1.5, 0.2]),
    "Categorical": (lambda x, y: D.Categorical(logits=x), [[0.3, -1.0, 0.0]], [[1.5, 0.2, -2.0]]),
    "MultivariateNormal": (lambda x, y: D.MultivariateNormal(x[:, 0], scale_tril=x[:, 1:].tril()),
                           np.hstack([MU[:, None], np.linalg.cholesky(COV)]),
                           np.hstack([-MU[:, None], np.linalg.cholesky(COV + np.eye(3))])),
}


@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_gradients_match_finite_differences(name):
    make, p, q = KL_PAIRS[name]
    gradcheck(lambda x, y: D.kl_divergence(make(x, None), make(y, None)), [t64(p, grad=True), t64(q, grad=True)])


def test_kl_dispatch_and_registration():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q "
                                                  "type Bernoulli"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))

    class Wide(D.Normal):
        pass

    # A subclass uses its base's pair until a more specific one is registered.
    np.testing.assert_allclose(D.kl_divergence(Wide(0.0, 1.0), D.Normal(1.0, 1.0)).item(), 0.5, rtol=1e-6)

    @D.register_kl(Wide, D.Normal)
    def _kl_wide(p, q):
        return mt.tensor(-1.0)
    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(1.0, 1.0)).item() == -1.0
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Independent(D.Normal(mt.zeros(2, 2), 1.0), 1),
                        D.Independent(D.Normal(mt.zeros(2, 2), 1.0), 2))
    with pytest.raises(TypeError, match="Distribution subclasses"):
        D.register_kl(int, D.Normal)
