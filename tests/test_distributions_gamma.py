"""Gamma, Chi2, Beta, Dirichlet, StudentT, LogNormal and TransformedDistribution without PyTorch: values
against SciPy's float64 laws, samples against the laws (Kolmogorov-Smirnov, moments to a few standard
errors), the implicit reparameterisation gradient against finite differences of the inverse CDF, KL against
quadrature and Monte Carlo, the transforms' inverses and log-det-Jacobians against finite differences."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

import minitensor as mt
import minitensor.distributions as D
from minitensor.backends import get_backend
from minitensor.distributions import transforms as T

N = 100_000


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


A, B = np.array([0.5, 2.0, 7.0]), np.array([1.5, 0.7, 2.0])
# name: (distribution, its SciPy twin (a frozen law per batch element), points to score)
LAWS = {
    "Gamma": (D.Gamma(t64(A), t64(B)), lambda i: stats.gamma(A[i], scale=1 / B[i]), [0.3, 2.0, 4.0]),
    "Chi2": (D.Chi2(t64(A)), lambda i: stats.chi2(A[i]), [0.3, 2.0, 14.0]),
    "Beta": (D.Beta(t64(A), t64(B)), lambda i: stats.beta(A[i], B[i]), [0.3, 0.9, 0.6]),
    "StudentT": (D.StudentT(t64(A + 1.2), t64([0.0, 1.0, -1.0]), t64(B)),  # df 1.7: infinite variance
                 lambda i: stats.t(A[i] + 1.2, [0.0, 1.0, -1.0][i], B[i]), [0.3, -1.2, 2.0]),
    "LogNormal": (D.LogNormal(t64([0.0, 1.0, -1.0]), t64(B)),
                  lambda i: stats.lognorm(B[i], scale=math.exp([0, 1, -1][i])), [0.3, 1.2, 2.0]),
}


@pytest.mark.parametrize("name", LAWS)
def test_values_match_scipy(name):
    d, law, x = LAWS[name]
    want = [law(i) for i in range(3)]
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), [w.logpdf(v) for w, v in zip(want, x)], rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), [w.entropy() for w in want], rtol=1e-10)
    for prop in ("mean", "variance"):
        np.testing.assert_allclose(getattr(d, prop).numpy(), [getattr(w, {"variance": "var"}.get(prop, prop))()
                                                              for w in want], rtol=1e-12)
    if name in ("Gamma", "Chi2", "LogNormal"):
        np.testing.assert_allclose(d.cdf(t64(x)).numpy(), [w.cdf(v) for w, v in zip(want, x)], rtol=1e-12)


def test_modes_and_undefined_moments():
    np.testing.assert_allclose(D.Gamma(t64(A), t64(B)).mode.numpy(), np.maximum(A - 1, 0) / B)
    np.testing.assert_allclose(D.Beta(t64([2.0, 5.0]), t64([3.0, 1.5])).mode.numpy(), [1 / 3, 4 / 4.5])
    dirichlet = D.Dirichlet(t64([[2.0, 3.0, 5.0], [0.5, 0.2, 0.7], [0.5, 3.0, 2.0]]))
    np.testing.assert_allclose(dirichlet.mode.numpy(), [[1 / 7, 2 / 7, 4 / 7], [1, 0, 0], [0, 2 / 3, 1 / 3]])
    t = D.StudentT(t64([0.5, 1.5, 3.0]))
    np.testing.assert_array_equal(t.mean.numpy(), [np.nan, 0.0, 0.0])
    np.testing.assert_array_equal(t.variance.numpy(), [np.nan, np.inf, 3.0])


def test_dirichlet_matches_scipy():
    alpha = np.array([[0.5, 2.0, 3.0], [0.3, 0.4, 0.9]])
    d = D.Dirichlet(t64(alpha))
    x = np.array([0.2, 0.3, 0.5])
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    np.testing.assert_allclose(d.log_prob(t64(x)).numpy(), [stats.dirichlet(a).logpdf(x) for a in alpha], rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), [stats.dirichlet(a).entropy() for a in alpha], rtol=1e-12)
    np.testing.assert_allclose(d.mean.numpy(), [stats.dirichlet(a).mean() for a in alpha], rtol=1e-12)
    np.testing.assert_allclose(d.variance.numpy(), [stats.dirichlet(a).var() for a in alpha], rtol=1e-12)


@pytest.mark.parametrize("name", LAWS)
def test_samples_follow_the_law(name):
    d, law, _ = LAWS[name]
    mt.manual_seed(21)
    x = d.sample((N,)).numpy()
    assert x.shape == (N, 3) and bool(d.support.check(mt.tensor(x)).all())
    for i in range(3):
        assert stats.kstest(x[:, i], law(i).cdf).pvalue > 1e-3, i


def test_dirichlet_samples_have_the_moments_and_repeat_under_a_seed():
    alpha = np.array([0.3, 2.0, 5.0])
    d = D.Dirichlet(t64(alpha))
    mt.manual_seed(3)
    x = d.sample((N,)).numpy()
    mt.manual_seed(3)
    np.testing.assert_array_equal(x, d.sample((N,)).numpy())
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    law = stats.dirichlet(alpha)
    assert (np.abs(x.mean(0) - law.mean()) < 5 * np.sqrt(law.var() / N)).all()
    np.testing.assert_allclose(x.var(0), law.var(), rtol=0.03)
    assert stats.kstest(x[:, 0], stats.beta(alpha[0], alpha[1:].sum()).cdf).pvalue > 1e-3  # the marginal


def test_float32_samples_are_float32_and_positive():
    mt.manual_seed(5)
    x = D.Gamma(mt.tensor([1e-3, 0.05]), 1.0).sample((10_000,))
    assert x.dtype == mt.float32 and bool((x > 0).all())  # draws that round to 0 are raised to the tiny normal


@pytest.mark.parametrize("alpha", [0.02, 0.3, 1.0, 2.5, 9.0, 40.0, 800.0, 5000.0])
def test_implicit_gamma_gradient_is_the_inverse_cdf_derivative(alpha):
    """dx/dalpha at fixed u = P(alpha, x): the derivative of x = P^-1(alpha, u), by central differences of
    SciPy's gammaincinv."""
    a = np.full(200, alpha)
    x = np.random.default_rng(1).standard_gamma(a)
    x = x[x > 1e-300]
    a = a[: x.size]
    u, h = special.gammainc(a, x), 1e-6 * alpha
    ok = (u > 1e-12) & (u < 1 - 1e-12)  # gammaincinv loses its digits in the extreme tails
    want = (special.gammaincinv(a + h, u) - special.gammaincinv(a - h, u)) / (2 * h)
    got = get_backend("cpu").standard_gamma_grad(a, x)
    np.testing.assert_allclose(got[ok], want[ok], rtol=2e-7)  # the differences' own error: ~3e-8


def test_implicit_gamma_gradient_against_mpmath():
    """-(dP/dalpha) / p at 40 digits, in both tails and the bulk, small and large alpha."""
    mpmath = pytest.importorskip("mpmath")
    a = np.array([0.02, 0.02, 1.0, 3.0, 1000.0, 1000.0, 1000.0])
    x = np.array([1e-40, 2.0, 0.3, 9.0, 893.65, 1000.0, 1100.0])
    with mpmath.workdps(40):
        want = [float(-mpmath.diff(lambda s: mpmath.gammainc(s, 0, mpmath.mpf(v), regularized=True), mpmath.mpf(al))
                      / (mpmath.mpf(v) ** (al - 1) * mpmath.exp(-v) / mpmath.gamma(al))) for al, v in zip(a, x)]
    np.testing.assert_allclose(get_backend("cpu").standard_gamma_grad(a, x), want, rtol=1e-9)


def test_rsample_gradients_are_reparameterised():
    """Gamma: x = g(alpha) / rate, so dx/drate = -x / rate and dx/dalpha = the implicit gradient / rate.
    Beta and Dirichlet: the Monte Carlo mean of d x_0 / d alpha is d E[x_0] / d alpha."""
    conc, rate = t64([0.7, 3.0], grad=True), t64([2.0, 0.5], grad=True)
    mt.manual_seed(9)
    x = D.Gamma(conc, rate).rsample((1000,))
    x.sum().backward()
    xs = x.detach().numpy()
    np.testing.assert_allclose(rate.grad.numpy(), (-xs / [2.0, 0.5]).sum(0), rtol=1e-12)
    implicit = get_backend("cpu").standard_gamma_grad(np.broadcast_to([0.7, 3.0], xs.shape), xs * [2.0, 0.5])
    np.testing.assert_allclose(conc.grad.numpy(), (implicit / [2.0, 0.5]).sum(0), rtol=1e-10)

    alpha = t64([0.8, 2.0, 3.0], grad=True)
    mt.manual_seed(10)
    D.Dirichlet(alpha).rsample((N,))[:, 0].mean().backward()
    s = 5.8
    np.testing.assert_allclose(alpha.grad.numpy(), [(s - 0.8) / s**2, -0.8 / s**2, -0.8 / s**2], atol=4e-3)
    c1, c0 = t64(1.5, grad=True), t64(0.5, grad=True)
    mt.manual_seed(11)
    D.Beta(c1, c0).rsample((N,)).mean().backward()
    np.testing.assert_allclose([c1.grad.item(), c0.grad.item()], [0.5 / 4, -1.5 / 4], atol=4e-3)
    df = t64([4.0], grad=True)
    mt.manual_seed(12)
    D.StudentT(df).rsample((N,)).abs().mean().backward()  # E|t| = 2 sqrt(df) / ((df - 1) B(df/2, 1/2))
    f = lambda v: 2 * math.sqrt(v) / ((v - 1) * special.beta(v / 2, 0.5))  # noqa: E731
    np.testing.assert_allclose(df.grad.item(), (f(4.0 + 1e-5) - f(4.0 - 1e-5)) / 2e-5, atol=5e-3)


def test_kl_divergences_against_quadrature_and_monte_carlo():
    for (a1, b1), (a2, b2) in [((0.5, 1.0), (1.5, 0.1)), ((7.0, 0.3), (3.0, 3.0))]:
        p, q = stats.gamma(a1, scale=1 / b1), stats.gamma(a2, scale=1 / b2)
        want = integrate.quad(lambda v: p.pdf(v) * (p.logpdf(v) - q.logpdf(v)), 0, np.inf, limit=200)[0]
        got = D.kl_divergence(D.Gamma(t64(a1), t64(b1)), D.Gamma(t64(a2), t64(b2))).item()
        assert got == pytest.approx(want, rel=1e-6)
        p, q = stats.beta(a1, b1 + 1), stats.beta(a2, b2 + 1)
        want = integrate.quad(lambda v: p.pdf(v) * (p.logpdf(v) - q.logpdf(v)), 0, 1, limit=200)[0]
        got = D.kl_divergence(D.Beta(t64(a1), t64(b1 + 1)), D.Beta(t64(a2), t64(b2 + 1))).item()
        assert got == pytest.approx(want, rel=1e-6)
    alpha_p, alpha_q = np.array([0.7, 2.0, 3.0]), np.array([1.5, 1.0, 0.4])
    x = stats.dirichlet(alpha_p).rvs(N, random_state=0)
    terms = stats.dirichlet(alpha_p).logpdf(x.T) - stats.dirichlet(alpha_q).logpdf(x.T)
    got = D.kl_divergence(D.Dirichlet(t64(alpha_p)), D.Dirichlet(t64(alpha_q))).item()
    assert abs(got - terms.mean()) < 5 * terms.std() / math.sqrt(N)
    # a two-coordinate Dirichlet is a Beta
    two = D.kl_divergence(D.Dirichlet(t64([0.7, 2.0])), D.Dirichlet(t64([1.5, 0.4]))).item()
    assert two == pytest.approx(D.kl_divergence(D.Beta(t64(0.7), t64(2.0)), D.Beta(t64(1.5), t64(0.4))).item())


@pytest.mark.parametrize("make,message", [
    (lambda: D.Gamma(t64([1.0, -1.0]), 1.0), "Expected parameter concentration"),
    (lambda: D.Gamma(1.0, 0.0), "Expected parameter rate"),
    (lambda: D.Beta(1.0, t64([0.0])), "Expected parameter concentration"),
    (lambda: D.Dirichlet(t64([1.0, 0.0])), "Expected parameter concentration"),
    (lambda: D.Dirichlet(t64(1.0)), "must be at least one-dimensional"),
    (lambda: D.StudentT(t64([-1.0])), "Expected parameter df"),
    (lambda: D.LogNormal(0.0, t64([-1.0])), "Expected parameter scale"),
    (lambda: D.Gamma(1.0, 1.0).log_prob(t64(-1.0)), "Expected value argument"),
    (lambda: D.Beta(1.0, 1.0).log_prob(t64(1.5)), "Expected value argument"),
    (lambda: D.Dirichlet(mt.ones(3)).log_prob(t64([0.5, 0.6, 0.1])), "Expected value argument"),
])
def test_validation_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()
    D.Gamma(t64([1.0, -1.0]), 1.0, validate_args=False)  # validation off: built


# ------------------------------------------------------------------------------------- transforms
TRANSFORMS = {
    "Exp": (T.ExpTransform(), [-2.0, 0.0, 1.5]),
    "Affine": (T.AffineTransform(t64([0.5, -1.0, 2.0]), t64([2.0, -0.5, 3.0])), [-2.0, 0.0, 1.5]),
    "Affine-number": (T.AffineTransform(1.0, -3.0), [-2.0, 0.0, 1.5]),
    "Sigmoid": (T.SigmoidTransform(), [-4.0, 0.0, 3.0]),
    "Tanh": (T.TanhTransform(), [-2.0, 0.1, 1.5]),
    "Power": (T.PowerTransform(t64(2.5)), [0.2, 1.0, 3.0]),
    "Power-negative": (T.PowerTransform(-0.5), [0.2, 1.0, 3.0]),
    "Compose": (T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.TanhTransform(), T.AffineTransform(1.0, 3.0)]),
                [-1.0, 0.0, 0.4]),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_inverse_and_log_det_jacobian(name):
    t, x = TRANSFORMS[name]
    x = np.asarray(x)
    y = t(t64(x))
    np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-10, atol=1e-12)
    h = 1e-6
    dydx = (t(t64(x + h)).numpy() - t(t64(x - h)).numpy()) / (2 * h)
    np.testing.assert_allclose(t.log_abs_det_jacobian(t64(x), y).numpy(), np.log(np.abs(dydx)), rtol=1e-7,
                               atol=1e-8)
    np.testing.assert_allclose(t.inv.log_abs_det_jacobian(y, t64(x)).numpy(), -np.log(np.abs(dydx)), rtol=1e-7,
                               atol=1e-8)
    assert t.inv.inv is t


def test_cache_returns_the_exact_input_and_event_dims_sum():
    t = T.TanhTransform(cache_size=1)
    x = t64([20.0], grad=True)
    y = t(x)
    assert t.inv(y) is x  # atanh(tanh(20)) would be inf
    assert T.TanhTransform().inv(y).item() == math.inf
    a = T.AffineTransform(t64([0.0, 1.0]), t64([2.0, -3.0]), event_dim=1)
    ladj = a.log_abs_det_jacobian(t64(np.zeros((4, 2))), None)
    assert ladj.shape == (4,) and np.allclose(ladj.numpy(), math.log(6.0))
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    cached = T.AffineTransform(1.0, 2.0).with_cache()
    z = t64([3.0])
    assert cached.inv(cached(z)) is z and cached.with_cache(1) is cached and cached.loc == 1.0


def test_transformed_distribution_is_the_change_of_variables():
    """Y = 1 + 3 tanh(0.5 + 2 X), X ~ N(mu, s): log p_Y(y) = log p_X(x) - log|dy/dx|, and samples
    are the transformed samples of the base (one seed)."""
    mu, s = np.array([0.0, 1.0]), np.array([1.0, 0.5])
    parts = [T.AffineTransform(0.5, 2.0), T.TanhTransform(), T.AffineTransform(1.0, 3.0)]
    d = D.TransformedDistribution(D.Normal(t64(mu), t64(s)), parts)
    y = np.array([0.2, 3.5])
    x = (np.arctanh((y - 1) / 3) - 0.5) / 2
    dydx = 3 * 2 * (1 - np.tanh(0.5 + 2 * x) ** 2)
    np.testing.assert_allclose(d.log_prob(t64(y)).numpy(), stats.norm(mu, s).logpdf(x) - np.log(dydx), rtol=1e-12)
    assert d.batch_shape == (2,) and d.event_shape == () and repr(d.support) == "Real()"
    mt.manual_seed(2)
    got = d.sample((5,)).numpy()
    mt.manual_seed(2)
    base = D.Normal(t64(mu), t64(s)).sample((5,)).numpy()
    np.testing.assert_allclose(got, 1 + 3 * np.tanh(0.5 + 2 * base), rtol=1e-12)
    np.testing.assert_allclose(d.cdf(t64(y)).numpy(), stats.norm(mu, s).cdf(x), rtol=1e-12)
    flipped = D.TransformedDistribution(D.Normal(t64(mu), t64(s)), T.AffineTransform(0.0, -1.0))
    np.testing.assert_allclose(flipped.cdf(t64(y)).numpy(), stats.norm(mu, s).sf(-y), rtol=1e-12)
    event = D.TransformedDistribution(D.Normal(t64(mu), t64(s)), T.AffineTransform(0.0, t64([2.0, 3.0]), event_dim=1))
    assert event.batch_shape == () and event.event_shape == (2,)
    want = stats.norm(mu, s).logpdf(y / [2, 3]).sum() - np.log(6)  # one event: the log-dets summed
    np.testing.assert_allclose(event.log_prob(t64(y)).item(), want, rtol=1e-12)


def test_lognormal_is_exp_of_a_normal():
    loc, scale = t64([0.0, 1.0]), t64([1.0, 0.5])
    a = D.LogNormal(loc, scale)
    b = D.TransformedDistribution(D.Normal(loc, scale), T.ExpTransform())
    y = t64([0.5, 2.0])
    np.testing.assert_allclose(a.log_prob(y).numpy(), b.log_prob(y).numpy(), rtol=1e-15)
    mt.manual_seed(4)
    sa = a.sample((6,)).numpy()
    mt.manual_seed(4)
    np.testing.assert_array_equal(sa, b.sample((6,)).numpy())
    np.testing.assert_allclose(a.mode.numpy(), np.exp([0.0 - 1.0, 1.0 - 0.25]), rtol=1e-15)
    assert a.expand((3, 2)).batch_shape == (3, 2) and isinstance(a.expand((3, 2)), D.LogNormal)
