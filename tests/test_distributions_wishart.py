"""Wishart against SciPy's (log-density, entropy) for each parameterisation, moments in closed form and from
samples (bounds of 5 standard errors), finite-difference gradients, the exponential family's Bregman entropy,
and (marked torch) torch.distributions.Wishart on the same parameters."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import minitensor as mt
import minitensor.distributions as D
from minitensor.testing import gradcheck

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3))
V = A @ A.transpose(0, 2, 1) + np.eye(3)
DF = np.array([4.5, 7.0])
FORMS = {"covariance_matrix": V, "precision_matrix": np.linalg.inv(V), "scale_tril": np.linalg.cholesky(V)}


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


@pytest.mark.parametrize("form", FORMS)
def test_wishart_matches_scipy(form):
    d = D.Wishart(t64(DF), **{form: t64(FORMS[form])})
    assert d.batch_shape == (2,) and d.event_shape == (3, 3)
    refs = [stats.wishart(DF[i], V[i]) for i in range(2)]
    X = np.stack([refs[i].rvs(4, random_state=i) for i in range(2)], 1)  # (4, 2, 3, 3)
    want = np.stack([refs[i].logpdf(X[:, i].transpose(1, 2, 0)) for i in range(2)], -1)
    np.testing.assert_allclose(d.log_prob(t64(X)).numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(d.entropy().numpy(), [r.entropy() for r in refs], rtol=1e-10)
    np.testing.assert_allclose(d.mean.numpy(), DF[:, None, None] * V, rtol=1e-10)
    diag = np.diagonal(V, axis1=1, axis2=2)
    var = DF[:, None, None] * (V ** 2 + diag[:, :, None] * diag[:, None, :])
    np.testing.assert_allclose(d.variance.numpy(), var, rtol=1e-10)
    np.testing.assert_allclose(d.mode.numpy(), (DF - 4)[:, None, None] * V, rtol=1e-10)
    np.testing.assert_allclose(D.ExponentialFamily.entropy(d).detach().numpy(), d.entropy().numpy(), rtol=1e-9)


def test_wishart_samples_and_gradients():
    d = D.Wishart(t64(DF), covariance_matrix=t64(V))
    n = 20_000
    mt.manual_seed(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a non-singular draw is not reported as singular
        s = d.rsample((n,)).numpy()
    diag = np.diagonal(V, axis1=1, axis2=2)
    var = DF[:, None, None] * (V ** 2 + diag[:, :, None] * diag[:, None, :])
    # 18 skewed entries (chi-square-like): 6 standard errors each (checked unbiased over 1.2M draws)
    assert (np.abs(s.mean(0) - DF[:, None, None] * V) < 6 * np.sqrt(var / n)).all()
    assert d.expand((4, 2)).sample((3,)).shape == (3, 4, 2, 3, 3)
    L = np.linalg.cholesky(V)
    X = t64(np.stack([stats.wishart(DF[i], V[i]).rvs(random_state=5) for i in range(2)]))
    leaves = [t64(DF, grad=True), t64(L, grad=True)]
    gradcheck(lambda nu, tril: D.Wishart(nu, scale_tril=tril.tril()).log_prob(X), leaves)
    gradcheck(lambda nu, tril: D.Wishart(nu, scale_tril=tril.tril()).entropy(), leaves)

    def rsample(tril):  # the draw is linear in L at fixed noise (df's gradient goes through standard_gamma)
        mt.manual_seed(2)
        return D.Wishart(t64(DF), scale_tril=tril.tril()).rsample((2,))
    gradcheck(rsample, [t64(L, grad=True)])


def test_wishart_errors():
    with pytest.raises(AssertionError, match="Exactly one"):
        D.Wishart(5.0)
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1"):
        D.Wishart(1.5, covariance_matrix=t64(V))
    with pytest.warns(UserWarning, match="Low df"):
        D.Wishart(2.5, covariance_matrix=t64(V))


@pytest.mark.torch
def test_wishart_against_torch():
    torch = pytest.importorskip("torch")
    X = np.stack([np.stack([stats.wishart(DF[i], V[i]).rvs(random_state=j) for i in range(2)]) for j in range(3)])
    out = []
    for lib in (mt, torch):
        df, cov = lib.tensor(DF, requires_grad=True), lib.tensor(V)
        d = lib.distributions.Wishart(df, covariance_matrix=cov)
        q = lib.distributions.Wishart(df.detach() + 1.0, covariance_matrix=cov * 2)
        lp, ent = d.log_prob(lib.tensor(X)), d.entropy()
        (lp.sum() + ent.sum()).backward()
        kl = lib.distributions.kl_divergence(d, q)
        out.append([lp.detach().numpy(), ent.detach().numpy(), df.grad.numpy(), d.variance.detach().numpy(),
                    d.precision_matrix.detach().numpy(), kl.detach().numpy()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
