"""The KL pairs between families (kl_cross.py): each finite one against the integral of p log(p / q) by
quadrature (float64, over p's support), the infinite ones inf, gradients by finite differences, and (marked
torch) torch.distributions.kl_divergence on the same parameters."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

import minitensor as mt
import minitensor.distributions as D
from minitensor.testing import gradcheck


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


# name: (make p(lib, params), make q(lib), p's params, p's support for the integral (or None: discrete))
def _cases(lib):
    T = lib.distributions
    f = lambda *v: lib.tensor(np.asarray(v, dtype=np.float64))  # noqa: E731
    return {
        "Beta-ContinuousBernoulli": (lambda a: T.Beta(a[0], a[1]), T.ContinuousBernoulli(f(0.3)), [2.0, 3.0], (0, 1)),
        "Beta-Exponential": (lambda a: T.Beta(a[0], a[1]), T.Exponential(f(1.5)), [2.0, 3.0], (0, 1)),
        "Beta-Gamma": (lambda a: T.Beta(a[0], a[1]), T.Gamma(f(2.0), f(3.0)), [2.0, 3.0], (0, 1)),
        "Beta-Normal": (lambda a: T.Beta(a[0], a[1]), T.Normal(f(0.2), f(0.7)), [2.0, 3.0], (0, 1)),
        "Beta-Uniform": (lambda a: T.Beta(a[0], a[1]), T.Uniform(f(-1.0), f(2.0)), [2.0, 3.0], (0, 1)),
        "ContinuousBernoulli-Exponential": (lambda a: T.ContinuousBernoulli(a[0]), T.Exponential(f(1.5)), [0.3],
                                            (0, 1)),
        "ContinuousBernoulli-Normal": (lambda a: T.ContinuousBernoulli(a[0]), T.Normal(f(0.2), f(0.7)), [0.3], (0, 1)),
        "ContinuousBernoulli-Uniform": (lambda a: T.ContinuousBernoulli(a[0]), T.Uniform(f(-1.0), f(2.0)), [0.3],
                                        (0, 1)),
        "Exponential-Gamma": (lambda a: T.Exponential(a[0]), T.Gamma(f(2.0), f(3.0)), [1.5], (0, np.inf)),
        "Exponential-Gumbel": (lambda a: T.Exponential(a[0]), T.Gumbel(f(0.5), f(2.0)), [1.5], (0, np.inf)),
        "Gamma-Exponential": (lambda a: T.Gamma(a[0], a[1]), T.Exponential(f(1.5)), [2.0, 3.0], (0, np.inf)),
        "Gamma-Gumbel": (lambda a: T.Gamma(a[0], a[1]), T.Gumbel(f(0.5), f(2.0)), [2.0, 3.0], (0, np.inf)),
        "Gamma-Normal": (lambda a: T.Gamma(a[0], a[1]), T.Normal(f(0.2), f(0.7)), [2.0, 3.0], (0, np.inf)),
        "Gumbel-Normal": (lambda a: T.Gumbel(a[0], a[1]), T.Normal(f(0.2), f(1.7)), [0.5, 0.8], (-np.inf, np.inf)),
        "Laplace-Normal": (lambda a: T.Laplace(a[0], a[1]), T.Normal(f(0.2), f(1.7)), [0.5, 0.8], (-np.inf, np.inf)),
        "Normal-Gumbel": (lambda a: T.Normal(a[0], a[1]), T.Gumbel(f(0.5), f(2.0)), [0.5, 0.8], (-np.inf, np.inf)),
        "Pareto-Exponential": (lambda a: T.Pareto(a[0], a[1]), T.Exponential(f(1.5)), [1.0, 3.0], (1.0, np.inf)),
        "Pareto-Gamma": (lambda a: T.Pareto(a[0], a[1]), T.Gamma(f(2.0), f(3.0)), [1.0, 3.0], (1.0, np.inf)),
        "Pareto-Normal": (lambda a: T.Pareto(a[0], a[1]), T.Normal(f(0.2), f(1.7)), [1.0, 3.0], (1.0, np.inf)),
        "Uniform-Beta": (lambda a: T.Uniform(a[0], a[1]), T.Beta(f(2.0), f(3.0)), [0.2, 0.7], (0.2, 0.7)),
        "Uniform-ContinuousBernoulli": (lambda a: T.Uniform(a[0], a[1]), T.ContinuousBernoulli(f(0.3)), [0.2, 0.7],
                                        (0.2, 0.7)),
        "Uniform-Exponential": (lambda a: T.Uniform(a[0], a[1]), T.Exponential(f(1.5)), [0.2, 0.7], (0.2, 0.7)),
        "Uniform-Gamma": (lambda a: T.Uniform(a[0], a[1]), T.Gamma(f(2.0), f(3.0)), [0.2, 0.7], (0.2, 0.7)),
        "Uniform-Gumbel": (lambda a: T.Uniform(a[0], a[1]), T.Gumbel(f(0.5), f(2.0)), [0.2, 0.7], (0.2, 0.7)),
        "Bernoulli-Poisson": (lambda a: T.Bernoulli(a[0]), T.Poisson(f(0.8)), [0.3], None),
    }


CASES = _cases(mt)


@pytest.mark.parametrize("name", CASES)
def test_kl_matches_the_integral(name):
    make_p, q, params, support = CASES[name]
    p = make_p(t64(params))
    kl = mt.distributions.kl_divergence(p, q).item()
    if support is None:  # Bernoulli: a sum over {0, 1}
        x = t64([0.0, 1.0])
        lp = p.log_prob(x).numpy()
        want = (np.exp(lp) * (lp - q.log_prob(x).numpy())).sum()
    else:
        def integrand(x):
            v = t64([x])
            lp = p.log_prob(v).item()
            return 0.0 if np.exp(lp) == 0 else np.exp(lp) * (lp - q.log_prob(v).item())  # no 0 * inf far out
        want = integrate.quad(integrand, *support, limit=200)[0]
    np.testing.assert_allclose(kl, want, rtol=1e-6, atol=1e-9)
    gradcheck(lambda a: mt.distributions.kl_divergence(make_p(a), q), [t64(params, grad=True)])


def test_infinite_pairs():
    D_ = mt.distributions
    pairs = [(D_.Normal(0.0, 1.0), D_.Exponential(1.0)), (D_.Gamma(2.0, 1.0), D_.Uniform(0.0, 3.0)),
             (D_.Gumbel(0.0, 1.0), D_.Pareto(1.0, 2.0)), (D_.Laplace(0.0, 1.0), D_.Beta(2.0, 2.0)),
             (D_.Exponential(1.0), D_.ContinuousBernoulli(0.3)), (D_.Pareto(1.0, 2.0), D_.Uniform(0.0, 9.0)),
             (D_.Poisson(1.0), D_.Binomial(3, 0.5)), (D_.Beta(2.0, 2.0), D_.Pareto(1.0, 2.0)),
             (D_.Uniform(-0.5, 0.5), D_.Exponential(1.0)), (D_.Pareto(1.0, t64([0.5, 3.0])), D_.Exponential(1.0))]
    for p, q in pairs[:-1]:
        assert np.isinf(D.kl_divergence(p, q).numpy()).all(), (type(p).__name__, type(q).__name__)
    assert np.isinf(D.kl_divergence(*pairs[-1]).numpy()).tolist() == [True, False]


@pytest.mark.torch
@pytest.mark.parametrize("name", CASES)
def test_kl_against_torch(name):
    torch = pytest.importorskip("torch")
    theirs_case = _cases(torch)[name]
    make_p, q, params, _ = CASES[name]
    a_mt, a_t = t64(params, grad=True), torch.tensor(params, dtype=torch.float64, requires_grad=True)
    kl_mt = D.kl_divergence(make_p(a_mt), q)
    kl_t = torch.distributions.kl_divergence(theirs_case[0](a_t), theirs_case[1])
    np.testing.assert_allclose(kl_mt.detach().numpy(), kl_t.detach().numpy(), rtol=1e-10)
    kl_mt.sum().backward()
    kl_t.sum().backward()
    # through digamma's derivative: PyTorch's trigamma is 2e-10 off SciPy's at 2 (minitensor's is not)
    np.testing.assert_allclose(a_mt.grad.numpy(), a_t.grad.numpy(), rtol=1e-7, atol=1e-12)
