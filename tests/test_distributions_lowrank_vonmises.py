"""LowRankMultivariateNormal, VonMises and LogisticNormal against float64 references (SciPy's multivariate
normal with the full covariance, SciPy's von Mises, the change of variables through a numerical Jacobian),
samples with fixed seeds, finite-difference gradients, and (marked torch) torch.distributions."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import minitensor as mt
import minitensor.distributions as D
from minitensor.testing import gradcheck

RNG = np.random.default_rng(0)
LOC = RNG.standard_normal((2, 4))
W = RNG.standard_normal((2, 4, 2))
DIAG = RNG.uniform(0.5, 2.0, (2, 4))
N = 50_000


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def test_lowrank_matches_scipy():
    d = D.LowRankMultivariateNormal(t64(LOC), t64(W), t64(DIAG))
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    cov = W @ W.transpose(0, 2, 1) + np.stack([np.diag(v) for v in DIAG])
    x = RNG.standard_normal((3, 2, 4))
    refs = [stats.multivariate_normal(LOC[i], cov[i]) for i in range(2)]
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), np.stack([refs[i].logpdf(x[:, i]) for i in range(2)], -1),
                               rtol=1e-10)
    np.testing.assert_allclose(d.entropy().numpy(), [r.entropy() for r in refs], rtol=1e-12)
    np.testing.assert_allclose(d.covariance_matrix.numpy(), cov, rtol=1e-12)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(cov), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d.scale_tril.numpy(), np.linalg.cholesky(cov), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), np.diagonal(cov, axis1=1, axis2=2), rtol=1e-12)
    # One factor shared by the batch; values of another batch shape.
    shared = D.LowRankMultivariateNormal(t64(LOC), t64(W[0]), t64(DIAG[0]))
    want = stats.multivariate_normal(LOC[1], cov[0]).logpdf(x[:, 1])
    np.testing.assert_allclose(shared.log_prob(t64(x))[:, 1].numpy(), want, rtol=1e-10)
    assert d.expand((5, 2)).log_prob(t64(x[:, None])).shape == (3, 5, 2)
    leaves = [t64(LOC, grad=True), t64(W, grad=True), t64(DIAG, grad=True)]
    gradcheck(lambda *p: D.LowRankMultivariateNormal(*p).log_prob(t64(x)), leaves)
    gradcheck(lambda *p: D.LowRankMultivariateNormal(*p).entropy(), leaves)

    def rsample(*p):
        mt.manual_seed(1)
        return D.LowRankMultivariateNormal(*p).rsample((2,))
    gradcheck(rsample, leaves)
    with pytest.raises(ValueError, match="cov_factor must be a batch"):
        D.LowRankMultivariateNormal(t64(LOC), t64(W[:, :3]), t64(DIAG))


def _np_kl_gauss(mu_p, cov_p, mu_q, cov_q):
    """(log|S_q| / |S_p| + tr(S_q^-1 S_p) + (mu_q - mu_p)^T S_q^-1 (mu_q - mu_p) - n) / 2."""
    inv_q = np.linalg.inv(cov_q)
    diff = mu_q - mu_p
    return 0.5 * (np.linalg.slogdet(cov_q)[1] - np.linalg.slogdet(cov_p)[1] + np.trace(inv_q @ cov_p)
                  + diff @ inv_q @ diff - len(mu_p))


def test_lowrank_kl_pairs():
    cov = W @ W.transpose(0, 2, 1) + np.stack([np.diag(v) for v in DIAG])
    B = RNG.standard_normal((2, 4, 4))
    full = B @ B.transpose(0, 2, 1) + np.eye(4)
    loc2 = RNG.standard_normal((2, 4))
    lowrank = lambda a, w, d: D.LowRankMultivariateNormal(a, w, d)  # noqa: E731
    mvn = D.MultivariateNormal(t64(loc2), covariance_matrix=t64(full))
    want = {"lr-lr": [_np_kl_gauss(LOC[i], cov[i], loc2[i], cov[1 - i]) for i in range(2)],
            "mvn-lr": [_np_kl_gauss(loc2[i], full[i], LOC[i], cov[i]) for i in range(2)],
            "lr-mvn": [_np_kl_gauss(LOC[i], cov[i], loc2[i], full[i]) for i in range(2)]}
    q_lr = lowrank(t64(loc2), t64(W[::-1]), t64(DIAG[::-1]))
    got = {"lr-lr": D.kl_divergence(lowrank(t64(LOC), t64(W), t64(DIAG)), q_lr),
           "mvn-lr": D.kl_divergence(mvn, lowrank(t64(LOC), t64(W), t64(DIAG))),
           "lr-mvn": D.kl_divergence(lowrank(t64(LOC), t64(W), t64(DIAG)), mvn)}
    for key in want:
        np.testing.assert_allclose(got[key].numpy(), want[key], rtol=1e-10)
    leaves = [t64(LOC, grad=True), t64(W, grad=True), t64(DIAG, grad=True)]
    gradcheck(lambda *p: D.kl_divergence(lowrank(*p), q_lr), leaves)
    gradcheck(lambda *p: D.kl_divergence(mvn, lowrank(*p)), leaves)
    gradcheck(lambda *p: D.kl_divergence(lowrank(*p), mvn), leaves)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(lowrank(t64(LOC), t64(W), t64(DIAG)), lowrank(t64(LOC[:, :3]), t64(W[:, :3]), t64(DIAG[:, :3])))


def test_lowrank_samples_have_the_covariance():
    d = D.LowRankMultivariateNormal(t64(LOC[0]), t64(W[0]), t64(DIAG[0]))
    mt.manual_seed(2)
    s = d.sample((N,)).numpy()
    cov = W[0] @ W[0].T + np.diag(DIAG[0])
    sd = np.sqrt(np.diag(cov))
    assert (np.abs(s.mean(0) - LOC[0]) < 5 * sd / np.sqrt(N)).all()
    # the sample covariance's entries have standard error <= sqrt(2) sd_i sd_j / sqrt(N)
    assert (np.abs(np.cov(s.T) - cov) < 5 * np.sqrt(2) * np.outer(sd, sd) / np.sqrt(N)).all()


def test_von_mises_matches_scipy():
    loc, kappa = np.array([0.5, -2.0, 1.0, 0.0]), np.array([1e-3, 2.0, 10.0, 50.0])
    d = D.VonMises(t64(loc), t64(kappa))
    x = np.array([0.1, 3.0, -1.0, 0.05])
    # PyTorch's polynomial log-Bessel approximation: good to ~2e-7 relative in I0.
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), stats.vonmises(kappa, loc).logpdf(x), rtol=1e-6,
                               atol=1e-6)
    # 1 - I1 / I0 cancels for large kappa: the approximation's 2e-7 shows as up to 1e-6 absolute.
    np.testing.assert_allclose(d.variance.numpy(), 1 - special.i1(kappa) / special.i0(kappa), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(d.mean.numpy(), loc)
    gradcheck(lambda a, k: D.VonMises(a, k).log_prob(t64(x)), [t64(loc, grad=True), t64(kappa, grad=True)])
    mt.manual_seed(3)
    s = d.sample((N,)).numpy()
    assert s.shape == (N, 4) and s.dtype == np.float64 and (np.abs(s) <= np.pi).all()
    for i in range(4):  # SciPy's law lives on [loc - pi, loc + pi): the draws unwrapped there
        unwrapped = np.mod(s[:, i] - loc[i] + np.pi, 2 * np.pi) - np.pi + loc[i]
        assert stats.kstest(unwrapped, stats.vonmises(kappa[i], loc[i]).cdf).pvalue > 1e-3
    assert D.VonMises(0.0, 1.0).sample((7,)).dtype == mt.float32


def _stick_breaking_np(x):
    k = x.shape[-1]
    z = special.expit(x - np.log(k - np.arange(k)))
    rest = np.concatenate([[1.0], np.cumprod(1 - z)])
    return np.concatenate([z, [1.0]]) * rest


def test_logistic_normal_change_of_variables():
    loc, scale = np.array([0.0, 1.0, -1.0]), np.array([1.0, 0.5, 2.0])
    d = D.LogisticNormal(t64(loc), t64(scale))
    assert d.batch_shape == () and d.event_shape == (4,)
    y = np.array([0.1, 0.2, 0.3, 0.4])
    x = D.StickBreakingTransform().inv(t64(y)).numpy()
    np.testing.assert_allclose(_stick_breaking_np(x), y, rtol=1e-12)
    h = 1e-6  # the Jacobian of x -> y[:-1] by central differences
    jac = np.stack([(_stick_breaking_np(x + h * e) - _stick_breaking_np(x - h * e))[:-1] / (2 * h) for e in np.eye(3)],
                   -1)
    want = stats.norm(loc, scale).logpdf(x).sum() - np.log(abs(np.linalg.det(jac)))
    np.testing.assert_allclose(d.log_prob(t64(y)).item(), want, rtol=1e-8)
    gradcheck(lambda a, b: D.LogisticNormal(a, b).log_prob(t64(y)), [t64(loc, grad=True), t64(scale, grad=True)])
    mt.manual_seed(4)
    s = d.sample((N,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    # the inverse map of the samples is normal again
    back = D.StickBreakingTransform().inv(t64(s)).numpy()
    for i in range(3):
        assert stats.kstest(back[:, i], stats.norm(loc[i], scale[i]).cdf).pvalue > 1e-3


@pytest.mark.torch
def test_against_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((3, 2, 4))
    out = []
    for lib in (mt, torch):
        p = [lib.tensor(a, requires_grad=True) for a in (LOC, W, DIAG)]
        d = lib.distributions.LowRankMultivariateNormal(*p)
        lp = d.log_prob(lib.tensor(x))
        (lp.sum() + d.entropy().sum()).backward()
        out.append([lp.detach().numpy(), d.precision_matrix.detach().numpy(), *(q.grad.numpy() for q in p)])
        f64 = lambda a: lib.tensor(np.ascontiguousarray(a, dtype=np.float64))  # noqa: E731
        v = lib.distributions.VonMises(f64([0.5, -2.0, 1.0]), f64([0.1, 2.0, 10.0]))
        out[-1] += [v.log_prob(f64([0.1, 3.0, -1.0])).numpy(), v.variance.numpy()]
        ln = lib.distributions.LogisticNormal(f64([[0.0, 1.0, -1.0]]), f64([[1.0, 0.5, 2.0]]))
        out[-1] += [ln.log_prob(f64([[0.1, 0.2, 0.3, 0.4]])).numpy()]
        d2 = lib.distributions.LowRankMultivariateNormal(f64(LOC[::-1]), f64(W[::-1]), f64(DIAG[::-1]))
        mvn = lib.distributions.MultivariateNormal(f64(LOC), covariance_matrix=d2.covariance_matrix.detach())
        kls = [lib.distributions.kl_divergence(a, b) for a, b in ((d, d2), (mvn, d2), (d2, mvn))]
        out[-1] += [kl.detach().numpy() for kl in kls]
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
