"""minitensor.distributions' argument handling: broadcasting and dtypes of the parameters, the constructors'
errors, validate_args on and off, the shapes of scored values, expand, and the constraints' checks."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.distributions as D
from minitensor.distributions import constraints
from minitensor.distributions.multivariate_normal import batch_mahalanobis

SHAPES = st.lists(st.integers(1, 3), max_size=3)


def test_parameters_broadcast_and_keep_the_tensors_dtype():
    d = D.Normal(mt.zeros(3, 1), mt.ones(2))
    assert d.batch_shape == (3, 2) and d.loc.shape == (3, 2) and d.event_shape == ()
    assert D.Normal(0.0, 1.0).batch_shape == () and D.Normal(0.0, 1.0).loc.dtype == mt.float32
    assert D.Uniform(0, mt.ones(2, dtype=mt.float64)).low.dtype == mt.float64
    assert D.Exponential(2.0).sample((4,)).dtype == mt.float32
    mt.set_default_dtype(mt.float64)
    assert D.Laplace(0.0, 1.0).rsample().dtype == mt.float64
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number"):
        D.Normal("0", 1.0)


def test_constructor_errors():
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Bernoulli()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical(mt.ones(2), mt.ones(2))
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional."):
        D.Categorical(mt.tensor(1.0))
    with pytest.raises(ValueError, match="`logits` parameter must be at least one-dimensional."):
        D.OneHotCategorical(logits=mt.tensor(1.0))
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.MultivariateNormal(mt.tensor(0.0), mt.eye(1))
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
        D.MultivariateNormal(mt.zeros(2), mt.eye(2), scale_tril=mt.eye(2))
    with pytest.raises(ValueError, match="^scale_tril matrix must be at least two-dimensional"):
        D.MultivariateNormal(mt.zeros(2), scale_tril=mt.ones(2))
    with pytest.raises(ValueError, match="^precision_matrix must be at least two-dimensional"):
        D.MultivariateNormal(mt.zeros(2), precision_matrix=mt.ones(2))


def test_bad_parameters_and_values_raise_value_error():
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of distribution "
                                         r"Normal\(loc: minitensor.Size\(\[2\]\), scale: minitensor.Size\(\[2\]\)\) "
                                         r"to satisfy the constraint GreaterThan\(lower_bound=0.0\)"):
        D.Normal(mt.zeros(2), mt.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="constraint Simplex"):
        D.Categorical(mt.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="constraint PositiveDefinite"):
        D.MultivariateNormal(mt.zeros(2), mt.tensor([[1.0, 0.0], [1.0, 1.0]]))  # not symmetric
    with pytest.raises(ValueError, match="constraint LowerCholesky"):
        D.MultivariateNormal(mt.zeros(2), scale_tril=mt.tensor([[1.0, 0.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"to be within the support \(GreaterThanEq\(lower_bound=0.0\)\)"):
        D.Exponential(1.0).log_prob(mt.tensor([0.5, -0.1]))
    with pytest.raises(ValueError, match=r"support \(IntegerInterval\(lower_bound=0, upper_bound=2\)\)"):
        D.Categorical(mt.ones(3)).log_prob(mt.tensor([0.5]))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape\\+event_shape"):
        D.Normal(mt.zeros(2), 1.0).log_prob(mt.zeros(3))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.MultivariateNormal(mt.zeros(2), mt.eye(2)).log_prob(mt.zeros(3))
    independent = D.Independent(D.Exponential(mt.ones(2, 2)), 1)
    assert repr(independent.support) == "IndependentConstraint(GreaterThanEq(lower_bound=0.0), 1)"
    np.testing.assert_array_equal(independent.support.check(mt.tensor([[1.0, -1.0], [1.0, 0.0]])).numpy(), [0, 1])
    with pytest.raises(ValueError, match=r"support \(GreaterThanEq\(lower_bound=0.0\)\)"):
        independent.log_prob(mt.tensor([1.0, -1.0]))  # the base distribution checks, as in PyTorch
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        D.Normal(0.0, 1.0).cdf(0.5)


def test_validate_args_off():
    d = D.Normal(0.0, -1.0, validate_args=False)
    assert np.isnan(d.log_prob(mt.tensor(0.0)).item())
    assert D.Exponential(1.0, validate_args=False).log_prob(mt.tensor(-1.0)).item() == pytest.approx(1.0)
    assert D.Uniform(0.0, 1.0, validate_args=False).log_prob(mt.tensor(2.0)).item() == -np.inf
    D.Distribution.set_default_validate_args(False)
    try:
        D.Bernoulli(mt.tensor(2.0))
        e = D.Normal(0.0, 1.0, validate_args=True).expand((3,))
        assert e._validate_args  # expand keeps the instance's choice
        with pytest.raises(ValueError):
            e.log_prob(mt.tensor(float("nan")))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Bernoulli(mt.tensor(2.0))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(2)  # type: ignore[arg-type]


def test_expand_shares_the_parameters():
    loc = mt.tensor([0.0, 1.0], requires_grad=True)
    d = D.Normal(loc, 1.0).expand((3, 2))
    assert d.batch_shape == (3, 2) and d.loc.shape == (3, 2)
    d.log_prob(mt.zeros(3, 2)).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [0.0, -3.0])
    c = D.Categorical(logits=mt.zeros(4)).expand((2,))
    assert c.batch_shape == (2,) and c.logits.shape == (2, 4) and "probs" not in c.__dict__
    m = D.MultivariateNormal(mt.zeros(2), mt.eye(2)).expand((5,))
    assert m.covariance_matrix.shape == (5, 2, 2) and m.entropy().shape == (5,)
    assert D.Normal(0.0, 1.0).perplexity().item() == pytest.approx(np.exp(0.5 + 0.5 * np.log(2 * np.pi)))


def test_lazy_parameters_and_modes():
    b = D.Bernoulli(logits=mt.tensor([0.0, 2.0]))
    assert "probs" not in b.__dict__ and repr(b) == "Bernoulli(logits: minitensor.Size([2]))"
    np.testing.assert_allclose(b.probs.numpy(), [0.5, 1 / (1 + np.exp(-2.0))], rtol=1e-6)
    assert "probs" in b.__dict__ and repr(b) == "Bernoulli(probs: minitensor.Size([2]), logits: minitensor.Size([2]))"
    logits = mt.tensor([0.0, 1.0], requires_grad=True)
    with mt.no_grad():
        probs = D.Bernoulli(logits=logits).probs
    assert probs.requires_grad  # computed with grad enabled, as PyTorch's lazy_property
    assert np.isnan(D.Uniform(0.0, 1.0).mode.item())
    np.testing.assert_array_equal(D.Exponential(mt.ones(2)).mode.numpy(), [0.0, 0.0])
    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        base = D.Distribution()
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        base.mode


def test_constraints_check():
    x = mt.tensor([-1.0, 0.0, 0.5, 1.0, float("nan")])
    np.testing.assert_array_equal(constraints.real.check(x).numpy(), [1, 1, 1, 1, 0])
    np.testing.assert_array_equal(constraints.positive.check(x).numpy(), [0, 0, 1, 1, 0])
    np.testing.assert_array_equal(constraints.nonnegative.check(x).numpy(), [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(constraints.unit_interval.check(x).numpy(), [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(constraints.boolean.check(x).numpy(), [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(constraints.simplex.check(mt.tensor([[0.5, 0.5], [0.5, 0.6]])).numpy(), [1, 0])
    np.testing.assert_array_equal(constraints.one_hot.check(mt.tensor([[0.0, 1.0], [1.0, 1.0]])).numpy(), [1, 0])
    np.testing.assert_array_equal(constraints.real_vector.check(mt.tensor([[0.0, 1.0], [1.0, x[4]]])).numpy(),
                                  [1, 0])
    pd = mt.stack([mt.eye(2), mt.tensor([[1.0, 2.0], [2.0, 1.0]])])
    np.testing.assert_array_equal(constraints.positive_definite.check(pd).numpy(), [1, 0])
    assert repr(constraints.interval(0.0, mt.tensor(2.0))) == "Interval(lower_bound=0.0, upper_bound=2.0)"
    assert repr(constraints.real_vector) == "IndependentConstraint(Real(), 1)"


def test_enumerate_support():
    np.testing.assert_array_equal(D.Bernoulli(mt.tensor([0.2, 0.3])).enumerate_support().numpy(), [[0, 0], [1, 1]])
    values = D.Categorical(mt.ones(2, 3)).enumerate_support(expand=False)
    assert values.shape == (3, 1) and values.dtype == mt.int64
    np.testing.assert_array_equal(values.numpy()[:, 0], [0, 1, 2])
    one_hot = D.OneHotCategorical(mt.ones(2, 3)).enumerate_support()
    assert one_hot.shape == (3, 2, 3)
    np.testing.assert_array_equal(one_hot.numpy()[:, 1], np.eye(3))
    with pytest.raises(NotImplementedError, match="cartesian product"):
        D.Independent(D.Bernoulli(mt.ones(2) / 2), 1).enumerate_support()
    with pytest.raises(NotImplementedError):
        D.Normal(0.0, 1.0).enumerate_support()


@st.composite
def broadcasting_pair(draw):
    """Two shapes that broadcast: a shape, and copies with dims set to 1 or leading dims dropped."""
    shape = draw(SHAPES)

    def part():
        ones = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
        kept = [1 if one else size for size, one in zip(shape, ones)]
        return kept[draw(st.integers(0, len(kept))):]
    return part(), part()


@settings(max_examples=40, deadline=None)
@given(broadcasting_pair(), SHAPES)
def test_normal_broadcasts_parameters_and_samples(shapes, sample_shape):
    """batch_shape is the parameters' broadcast shape; samples and scores have sample_shape + batch_shape."""
    loc_shape, scale_shape = shapes
    loc = np.linspace(-1, 1, int(np.prod(loc_shape))).reshape(loc_shape)
    scale = np.linspace(0.5, 2, int(np.prod(scale_shape))).reshape(scale_shape)
    batch = np.broadcast_shapes(loc.shape, scale.shape)
    d = D.Normal(mt.tensor(loc), mt.tensor(scale))
    assert d.batch_shape == batch
    x = d.sample(sample_shape)
    assert x.shape == (*sample_shape, *batch)
    want = -((x.numpy() - loc) ** 2) / (2 * scale ** 2) - np.log(scale) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(d.log_prob(x).numpy(), want, rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([1, 2, 3]), max_size=2), st.lists(st.integers(1, 3), max_size=2),
       st.lists(st.integers(1, 2), max_size=2), st.integers(1, 3))
def test_batch_mahalanobis_over_batch_shapes(l_batch, outer, repeats, n):
    """|L^{-1} x|^2 for x whose batch dims are L's (a dim of 1 in L broadcasting to any size) with more
    leading dims, against NumPy's broadcasting solve."""
    rng = np.random.default_rng(len(l_batch) * 100 + len(outer) * 10 + n)
    repeats = (repeats + [1, 1])[:len(l_batch)]
    x_batch = [r * s if s == 1 else s for s, r in zip(l_batch, repeats)]
    L = np.tril(rng.standard_normal((*l_batch, n, n))) + 3 * np.eye(n)
    x = rng.standard_normal((*outer, *x_batch, n))
    want = (np.linalg.solve(np.broadcast_to(L, (*outer, *x_batch, n, n)), x[..., None])[..., 0] ** 2).sum(-1)
    np.testing.assert_allclose(batch_mahalanobis(mt.tensor(L), mt.tensor(x)).numpy(), want, rtol=1e-10)
