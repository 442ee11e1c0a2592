"""minitensor.distributions against torch.distributions for the same parameters: values (log_prob, entropy,
mean, variance, stddev, mode, cdf, icdf, kl_divergence), their gradients with respect to the parameters, the
reprs and the validation messages. Samples are not compared (the random streams differ)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

COV = np.array([[2.0, 0.6, 0.2], [0.6, 1.0, -0.3], [0.2, -0.3, 1.5]])
RNG = np.random.default_rng(0)

# name: (make(module, params) -> distribution, parameters (float64 arrays), values to score, cdf/icdf exist)
CASES = {
    "Normal": (lambda D, p: D.Normal(p[0], p[1]), [[-1.0, 0.5, 2.0], [0.5, 1.0, 2.0]], [[0.3, -1.0, 4.0]], True),
    "Laplace": (lambda D, p: D.Laplace(p[0], p[1]), [[-1.0, 0.5, 2.0], [0.5, 1.0, 2.0]], [[0.3, -1.0, 4.0]], True),
    "Uniform": (lambda D, p: D.Uniform(p[0], p[1]), [[-1.0, 0.0, 2.0], [0.5, 3.0, 2.5]], [[0.2, 2.9, 2.2]], True),
    "Exponential": (lambda D, p: D.Exponential(p), [1.5, 0.3], [[0.2, 2.5], [1.0, 0.0]], True),
    "Bernoulli-probs": (lambda D, p: D.Bernoulli(p), [0.2, 0.5, 0.9], [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], False),
    "Bernoulli-logits": (lambda D, p: D.Bernoulli(logits=p), [-2.0, 0.0, 3.0], [[0.0, 1.0, 1.0]], False),
    "Categorical-probs": (lambda D, p: D.Categorical(p), [[1.0, 2.0, 5.0], [3.0, 3.0, 1.0]], [[2, 0], [1, 1]], False),
    "Categorical-logits": (lambda D, p: D.Categorical(logits=p), [[1.0, -2.0, 0.5]], [[2], [0]], False),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(logits=p), [[1.0, -2.0, 0.5], [0.0, 0.0, 3.0]],
                          [[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]], False),
    "MultivariateNormal-cov": (lambda D, p: D.MultivariateNormal(p[:, 0], covariance_matrix=p[:, 1:]),
                               np.hstack([[[0.5], [-1.0], [2.0]], COV]), RNG.standard_normal((2, 4, 1, 3)), False),
    "MultivariateNormal-tril": (lambda D, p: D.MultivariateNormal(p[..., 0], scale_tril=p[..., 1:]),
                                np.stack([np.hstack([[[0.5], [-1.0], [2.0]], np.linalg.cholesky(COV)])] * 2),
                                RNG.standard_normal((5, 2, 3)), False),
    "MultivariateNormal-precision": (lambda D, p: D.MultivariateNormal(p[:, 0], precision_matrix=p[:, 1:]),
                                     np.hstack([[[0.5], [-1.0], [2.0]], np.linalg.inv(COV)]),
                                     RNG.standard_normal((4, 3)), False),
    "Independent": (lambda D, p: D.Independent(D.Normal(p[0], p[1]), 1), [[[0.0, 1.0]], [[1.0, 0.5]]],
                    [[[0.3, -0.2]]], False),
}


def _both(name, grad=True):
    make, params, _, _ = CASES[name]
    p_mt = mt.tensor(np.asarray(params, dtype=np.float64), requires_grad=grad)
    p_t = torch.tensor(np.asarray(params, dtype=np.float64), requires_grad=grad)
    return (make(mt.distributions, p_mt), p_mt), (make(torch.distributions, p_t), p_t)


def _compare(get, name, outputs_have_grad=True):
    """get(distribution, lib) -> tensor, on both sides: the values, then the gradient of a fixed projection."""
    (d_mt, p_mt), (d_t, p_t) = _both(name)
    y_mt, y_t = get(d_mt, mt), get(d_t, torch)
    np.testing.assert_allclose(y_mt.detach().numpy(), y_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert tuple(y_mt.shape) == tuple(y_t.shape)
    if not outputs_have_grad or not y_t.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(y_t.shape))
    finite = np.isfinite(y_t.detach().numpy())
    (y_mt * mt.tensor(np.where(finite, w, 0.0))).sum().backward()
    (y_t * torch.tensor(np.where(finite, w, 0.0))).sum().backward()
    np.testing.assert_allclose(p_mt.grad.numpy(), p_t.grad.numpy(), rtol=1e-9, atol=1e-12)


def _value(lib, name, i):
    v = np.asarray(CASES[name][2][i], dtype=np.float64)
    if name.startswith("Categorical"):
        return lib.tensor(v.astype(np.int64))
    return lib.tensor(v)


@pytest.mark.parametrize("name", CASES)
def test_log_prob(name):
    for i in range(len(CASES[name][2])):
        _compare(lambda d, lib: d.log_prob(_value(lib, name, i)), name)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("prop", ["entropy", "mean", "variance", "stddev", "mode", "perplexity"])
def test_moments_and_entropy(name, prop):
    (d_mt, _), (d_t, _) = _both(name, grad=False)
    try:
        want = getattr(d_t, prop)
        want = want() if callable(want) else want
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            got = getattr(d_mt, prop)
            got() if callable(got) else got
        return
    _compare(lambda d, lib: getattr(d, prop)() if callable(getattr(d, prop)) else getattr(d, prop), name)


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case[3]])
def test_cdf_and_icdf(name):
    _compare(lambda d, lib: d.cdf(_value(lib, name, 0)), name)
    _compare(lambda d, lib: d.icdf(lib.tensor([0.05, 0.5, 0.99], dtype=lib.float64)[:d.batch_shape[0]]), name)


@pytest.mark.parametrize("name", CASES)
def test_expand_and_shapes(name):
    (d_mt, _), (d_t, _) = _both(name, grad=False)
    shape = (2,) + tuple(d_t.batch_shape)
    e_mt, e_t = d_mt.expand(shape), d_t.expand(shape)
    assert (tuple(e_mt.batch_shape), tuple(e_mt.event_shape)) == (tuple(e_t.batch_shape), tuple(e_t.event_shape))
    assert tuple(e_mt.sample((3,)).shape) == tuple(e_t.sample((3,)).shape)
    assert e_mt.sample().dtype.name == str(e_t.sample().dtype).split(".")[1]
    assert repr(d_mt).replace("minitensor.Size", "torch.Size") == repr(d_t)
    assert d_mt.has_rsample == d_t.has_rsample
    v_mt, v_t = _value(mt, name, 0), _value(torch, name, 0)
    np.testing.assert_allclose(e_mt.log_prob(v_mt).detach().numpy(), e_t.log_prob(v_t).detach().numpy(),
                               rtol=1e-10)


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith(("Bernoulli", "Categorical", "OneHot"))])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(name, expand):
    (d_mt, _), (d_t, _) = _both(name, grad=False)
    got, want = d_mt.enumerate_support(expand), d_t.enumerate_support(expand)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.dtype.name == str(want.dtype).split(".")[1] and d_mt.has_enumerate_support
    ind_mt, ind_t = mt.distributions.Independent(d_mt, 0), torch.distributions.Independent(d_t, 0)
    np.testing.assert_array_equal(ind_mt.enumerate_support(expand).numpy(), ind_t.enumerate_support(expand).numpy())


KL_PAIRS = [("Normal", [[0.3, -1.0], [0.5, 1.5]], [[0.7, 2.0], [2.0, 0.4]]),
            ("Laplace", [[0.3, -1.0], [0.5, 1.5]], [[0.7, 2.0], [2.0, 0.4]]),
            ("Exponential", [0.5, 1.5], [2.0, 0.4]),
            ("Uniform", [[0.0, 0.1, 0.0], [1.0, 2.0, 1.0]], [[-1.0, 0.0, 0.5], [3.0, 3.0, 2.0]]),
            ("Bernoulli", [0.2, 0.0, 1.0, 0.5], [0.6, 0.3, 0.0, 1.0]),
            ("Categorical", [[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]], [[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]]),
            ("OneHotCategorical", [[0.2, 0.0, 0.8]], [[0.1, 0.6, 0.3]]),
            ("MultivariateNormal", np.hstack([[[0.5], [-1.0], [2.0]], COV]),
             np.stack([np.hstack([[[0.0], [1.0], [0.0]], COV + k * np.eye(3)]) for k in (0.5, 2.0)])),
            ("Independent", [[[0.3, -1.0]], [[0.5, 1.5]]], [[[0.7, 2.0]], [[2.0, 0.4]]])]


def _kl_side(lib, name, p, q):
    D = lib.distributions
    make = {"MultivariateNormal": lambda x: D.MultivariateNormal(x[..., 0], covariance_matrix=x[..., 1:]),
            "Independent": lambda x: D.Independent(D.Normal(x[0], x[1]), 1),
            "Normal": lambda x: D.Normal(*x), "Laplace": lambda x: D.Laplace(*x),
            "Uniform": lambda x: D.Uniform(*x)}.get(name, getattr(D, name))
    return D.kl_divergence(make(p), make(q))


@pytest.mark.parametrize("name, p, q", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergence(name, p, q):
    leaves = {lib: [lib.tensor(np.asarray(x, dtype=np.float64), requires_grad=True) for x in (p, q)]
              for lib in (mt, torch)}
    out = {lib: _kl_side(lib, name, *leaves[lib]) for lib in (mt, torch)}
    want = out[torch].detach().numpy()
    np.testing.assert_allclose(out[mt].detach().numpy(), want, rtol=1e-10, atol=1e-12)
    w = np.where(np.isfinite(want), np.random.default_rng(2).standard_normal(want.shape), 0.0)
    for lib in (mt, torch):
        (out[lib] * lib.tensor(w)).sum().backward()
    for a, b in zip(leaves[mt], leaves[torch]):
        np.testing.assert_allclose(a.grad.numpy(), np.nan_to_num(b.grad.numpy()), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda D, lib: D.Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])),
    lambda D, lib: D.Uniform(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 0.5])),
    lambda D, lib: D.Bernoulli(lib.tensor([0.5, 1.5])),
    lambda D, lib: D.Categorical(lib.tensor([[0.5, -0.5]])),
    lambda D, lib: D.Exponential(lib.tensor(0.0)),
    lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda D, lib: D.MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda D, lib: D.Normal(0.0, 1.0).log_prob(lib.tensor(float("nan"))),
    lambda D, lib: D.Exponential(1.0).log_prob(lib.tensor([-1.0])),
    lambda D, lib: D.Bernoulli(0.5).log_prob(lib.tensor([0.5])),
    lambda D, lib: D.Categorical(lib.ones(3)).log_prob(lib.tensor([3])),
    lambda D, lib: D.Normal(lib.zeros(2), 1.0).log_prob(lib.zeros(3)),
    lambda D, lib: D.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3)),
    lambda D, lib: D.Normal(0.0, 1.0).log_prob(0.5),
])
def test_validation_messages(make):
    with pytest.raises(ValueError) as want:
        make(torch.distributions, torch)
    with pytest.raises(ValueError) as got:
        make(mt.distributions, mt)
    assert str(got.value).replace("minitensor.", "torch.") == str(want.value)


def test_every_public_name_is_a_torch_distributions_name():
    names = set(mt.distributions.__all__) | set(mt.distributions.constraints.__all__)
    missing = {n for n in mt.distributions.__all__ if not hasattr(torch.distributions, n)}
    missing |= {n for n in mt.distributions.constraints.__all__ if not hasattr(torch.distributions.constraints, n)}
    assert names and not missing
