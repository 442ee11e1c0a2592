"""The count, heavy-tailed, unit-interval and ratio distributions against torch.distributions on the same
parameters: log_prob, cdf, icdf, entropy, mean, variance, mode, kl_divergence and their gradients."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

# name: (make(module, params) -> distribution, parameters, values)
CASES = {
    "Poisson": (lambda D, p: D.Poisson(p), [0.5, 2.0, 7.0], [0.0, 3.0, 9.0]),
    "Binomial": (lambda D, p: D.Binomial(5, p), [0.2, 0.5, 0.9], [0.0, 2.0, 5.0]),
    "Binomial-logits": (lambda D, p: D.Binomial(5, logits=p), [-1.0, 0.0, 2.0], [0.0, 2.0, 5.0]),
    "Geometric": (lambda D, p: D.Geometric(p), [0.2, 0.5, 0.9], [0.0, 2.0, 5.0]),
    "NegativeBinomial": (lambda D, p: D.NegativeBinomial(p[0], p[1]), [[3.0, 1.5, 5.0], [0.2, 0.5, 0.9]],
                         [0.0, 2.0, 5.0]),
    "Multinomial": (lambda D, p: D.Multinomial(6, p), [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]],
                    [[1.0, 2.0, 3.0], [0.0, 0.0, 6.0]]),
    "Cauchy": (lambda D, p: D.Cauchy(p[0], p[1]), [[-1.0, 0.5, 2.0], [0.5, 1.0, 2.0]], [0.3, -1.0, 4.0]),
    "Gumbel": (lambda D, p: D.Gumbel(p[0], p[1]), [[-1.0, 0.5, 2.0], [0.5, 1.0, 2.0]], [0.3, -1.0, 4.0]),
    "HalfNormal": (lambda D, p: D.HalfNormal(p), [0.5, 1.0, 2.0], [0.3, 1.0, 4.0]),
    "HalfCauchy": (lambda D, p: D.HalfCauchy(p), [0.5, 1.0, 2.0], [0.3, 1.0, 4.0]),
    "Weibull": (lambda D, p: D.Weibull(p[0], p[1]), [[0.5, 1.0, 2.0], [0.7, 1.5, 3.0]], [0.3, 1.0, 4.0]),
    "Pareto": (lambda D, p: D.Pareto(p[0], p[1]), [[0.5, 1.0, 2.0], [2.5, 3.5, 5.0]], [1.3, 2.0, 4.0]),
    "Kumaraswamy": (lambda D, p: D.Kumaraswamy(p[0], p[1]), [[0.5, 1.0, 2.0], [0.7, 1.5, 3.0]], [0.3, 0.5, 0.9]),
    "InverseGamma": (lambda D, p: D.InverseGamma(p[0], p[1]), [[0.5, 1.5, 3.0], [0.7, 1.5, 3.0]], [0.3, 1.0, 4.0]),
    "FisherSnedecor": (lambda D, p: D.FisherSnedecor(p[0], p[1]), [[0.5, 3.0, 5.0], [4.5, 6.0, 9.0]],
                       [0.3, 1.0, 4.0]),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(p), [0.2, 0.4995, 0.9], [0.3, 1.0, 0.0]),
    "ContinuousBernoulli-logits": (lambda D, p: D.ContinuousBernoulli(logits=p), [-1.0, 0.001, 2.0], [0.3, 1.0, 0.0]),
}


def _both(name):
    make, params, _ = CASES[name]
    p_mt = mt.tensor(np.asarray(params, dtype=np.float64), requires_grad=True)
    p_t = torch.tensor(np.asarray(params, dtype=np.float64), requires_grad=True)
    return (make(mt.distributions, p_mt), p_mt), (make(torch.distributions, p_t), p_t)


def _compare(name, get, grad=True, rtol=1e-9):
    """get(distribution, lib) on both sides: equal values, and equal gradients of a fixed projection (where
    PyTorch's is defined); NotImplementedError on both sides passes."""
    (d_mt, p_mt), (d_t, p_t) = _both(name)
    try:
        y_t = get(d_t, torch)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            get(d_mt, mt)
        return
    y_mt = get(d_mt, mt)
    np.testing.assert_allclose(y_mt.detach().numpy(), y_t.detach().numpy(), rtol=rtol, atol=1e-12)
    assert tuple(y_mt.shape) == tuple(y_t.shape)
    if not grad or not y_t.requires_grad or not y_mt.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(y_t.shape))
    w = np.where(np.isfinite(y_t.detach().numpy()), w, 0.0)
    (y_t * torch.tensor(w)).sum().backward()
    if p_t.grad is None:
        return
    (y_mt * mt.tensor(w)).sum().backward()
    np.testing.assert_allclose(p_mt.grad.numpy(), p_t.grad.numpy(), rtol=1e-8, atol=1e-10)


def _value(lib, name):
    return lib.tensor(np.asarray(CASES[name][2], dtype=np.float64))


@pytest.mark.parametrize("name", CASES)
def test_log_prob(name):
    _compare(name, lambda d, lib: d.log_prob(_value(lib, name)))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("prop", ["entropy", "mean", "variance"])
def test_moments_and_entropy(name, prop):
    # Multinomial's entropy: PyTorch takes lgamma(n + 1) of an int64 tensor, in float32 (4e-8 off).
    rtol = 1e-7 if name == "Multinomial" else 1e-9
    _compare(name, lambda d, lib: d.entropy() if prop == "entropy" else getattr(d, prop), rtol=rtol)


@pytest.mark.parametrize("name", [n for n in CASES if n not in ("Kumaraswamy", "Multinomial")])
def test_mode(name):  # Kumaraswamy: PyTorch's mode formula is nan for every parameter (docs/differences.md)
    _compare(name, lambda d, lib: d.mode)


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith(("Poisson", "Binomial", "Geometric",
                                                                            "Negative", "Multinomial", "Fisher"))])
def test_cdf_and_icdf(name):
    # InverseGamma's cdf is igammac(a, b / x): neither library differentiates it in a.
    _compare(name, lambda d, lib: d.cdf(_value(lib, name)), grad=name != "InverseGamma")
    if name != "InverseGamma":
        _compare(name, lambda d, lib: d.icdf(lib.tensor([0.1, 0.5, 0.97], dtype=lib.float64)))


def test_infinite_moments():
    for lib in (mt, torch):
        d = lib.distributions.Pareto(lib.tensor([1.0, 1.0]), lib.tensor([0.5, 1.5]))
        np.testing.assert_array_equal(d.mean.numpy(), [np.inf, 3.0])
        assert np.isinf(d.variance.numpy()).all()
        assert np.isnan(lib.distributions.FisherSnedecor(lib.tensor([3.0]), lib.tensor([1.5])).mean.numpy()).all()


def test_generalized_pareto_float32():
    """PyTorch 2.13's GeneralizedPareto scores float32 only (float64 fails its isclose against a float32 0)."""
    out = []
    for lib in (mt, torch):
        p = lib.tensor([[-1.0, 0.5, 2.0], [0.5, 1.0, 2.0], [-0.2, 0.0, 0.3]], requires_grad=True)
        d = lib.distributions.GeneralizedPareto(p[0], p[1], p[2])
        v = lib.tensor([-0.5, 1.0, 4.0])
        values = [d.log_prob(v), d.cdf(v), d.icdf(lib.tensor([0.1, 0.5, 0.97])), d.entropy(), d.mean, d.variance]
        sum(y.sum() for y in values[:4]).backward()
        out.append([y.detach().numpy() for y in values] + [p.grad.numpy()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError):  # so that this test notices when PyTorch fixes it
        torch.distributions.GeneralizedPareto(torch.tensor(0.0, dtype=torch.float64), 1.0, 0.1).log_prob(
            torch.tensor(1.0, dtype=torch.float64))


def test_enumerate_support_and_expand():
    for lib in (mt, torch):
        d = lib.distributions.Binomial(lib.tensor([[3.0], [3.0]]), lib.tensor([0.2, 0.7]))
        assert tuple(d.enumerate_support().shape) == (4, 2, 2)
        assert tuple(d.expand((3, 2, 2)).batch_shape) == (3, 2, 2)
    e_mt = mt.distributions.Binomial(3, mt.tensor([0.2, 0.7])).enumerate_support(False)
    e_t = torch.distributions.Binomial(3, torch.tensor([0.2, 0.7])).enumerate_support(False)
    np.testing.assert_array_equal(e_mt.numpy(), e_t.numpy())


KL = {
    "Poisson": (lambda D, p: D.Poisson(p[0]), [[1.0, 2.0]], [[3.0, 0.5]]),
    "Binomial": (lambda D, p: D.Binomial(5, p[0]), [[0.3, 0.6]], [[0.5, 0.2]]),
    "Geometric": (lambda D, p: D.Geometric(p[0]), [[0.3, 0.6]], [[0.5, 0.2]]),
    "Gumbel": (lambda D, p: D.Gumbel(p[0], p[1]), [[0.3, 0.6], [1.0, 2.0]], [[0.5, 0.2], [1.5, 0.7]]),
    "HalfNormal": (lambda D, p: D.HalfNormal(p[0]), [[1.0, 2.0]], [[3.0, 0.5]]),
    "Pareto": (lambda D, p: D.Pareto(p[0], p[1]), [[1.0, 2.0], [1.0, 2.0]], [[3.0, 0.5], [1.5, 3.0]]),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(p[0]), [[0.3, 0.6]], [[0.5, 0.2]]),
}


@pytest.mark.parametrize("name", KL)
def test_kl_divergence(name):
    make, p, q = KL[name]
    out = []
    for lib in (mt, torch):
        pp = lib.tensor(np.asarray(p, dtype=np.float64), requires_grad=True)
        kl = lib.distributions.kl_divergence(make(lib.distributions, pp), make(lib.distributions,
                                                                               lib.tensor(np.asarray(q))))
        finite = np.isfinite(kl.detach().numpy())
        (kl * lib.tensor(finite.astype(np.float64))).sum().backward()
        out.append((kl.detach().numpy(), pp.grad.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-10)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-9, atol=1e-12)


def test_validation_messages():
    for make in (lambda D, lib: D.Geometric(lib.tensor([0.0, 0.5])),
                 lambda D, lib: D.NegativeBinomial(2.0, lib.tensor([1.0])),
                 lambda D, lib: D.Binomial(lib.tensor([2.5]), lib.tensor([0.2])),
                 lambda D, lib: D.Poisson(lib.tensor([1.0])).log_prob(lib.tensor([1.5]))):
        with pytest.raises(ValueError) as got:
            make(mt.distributions, mt)
        with pytest.raises(ValueError) as want:
            make(torch.distributions, torch)
        assert str(got.value).replace("minitensor.", "torch.") == str(want.value)
