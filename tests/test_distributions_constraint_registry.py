"""biject_to / transform_to: every registered constraint maps random reals inside itself, biject_to's maps
invert, the registry's errors, and (marked torch) the same transform types as PyTorch's registries."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.distributions as D
from minitensor.distributions import constraints as C

RNG = np.random.default_rng(0)


def t64(x):
    return mt.tensor(np.asarray(x, dtype=np.float64))


# name: (make(module) -> constraint, the unconstrained input's shape)
CASES = {
    "real": (lambda c: c.real, (4,)),
    "real_vector": (lambda c: c.real_vector, (2, 3)),
    "positive": (lambda c: c.positive, (4,)),
    "nonnegative": (lambda c: c.nonnegative, (4,)),
    "greater_than": (lambda c: c.greater_than(2.0), (4,)),
    "greater_than_eq": (lambda c: c.greater_than_eq(-1.0), (4,)),
    "less_than": (lambda c: c.less_than(3.0), (4,)),
    "unit_interval": (lambda c: c.unit_interval, (4,)),
    "interval": (lambda c: c.interval(-2.0, 5.0), (4,)),
    "half_open_interval": (lambda c: c.half_open_interval(0.5, 1.5), (4,)),
    "simplex": (lambda c: c.simplex, (2, 3)),
    "corr_cholesky": (lambda c: c.corr_cholesky, (2, 3)),
    "independent_positive": (lambda c: c.independent(c.positive, 1), (2, 3)),
    "cat": (lambda c: c.cat([c.positive, c.real, c.unit_interval], -1, [1, 2, 1]), (2, 4)),
    "stack": (lambda c: c.stack([c.positive, c.real, c.less_than(0.0)], -1), (2, 3)),
}
TRANSFORM_ONLY = {
    "lower_cholesky": (lambda c: c.lower_cholesky, (2, 3, 3)),
    "positive_definite": (lambda c: c.positive_definite, (2, 3, 3)),
    "positive_semidefinite": (lambda c: c.positive_semidefinite, (2, 3, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_biject_to_maps_onto_the_constraint_and_back(name):
    make, shape = CASES[name]
    c = make(C)
    x = t64(RNG.standard_normal(shape))
    t = D.biject_to(c)
    y = t(x)
    assert bool(c.check(y).all()) and t.bijective
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-8, atol=1e-10)
    if name not in ("corr_cholesky", "simplex"):
        assert t.log_abs_det_jacobian(x, y).shape[:1] == (shape[0],)


@pytest.mark.parametrize("name", [*CASES, *TRANSFORM_ONLY])
def test_transform_to_maps_into_the_constraint(name):
    make, shape = {**CASES, **TRANSFORM_ONLY}[name]
    c = make(C)
    y = D.transform_to(c)(t64(RNG.standard_normal(shape)))
    assert bool(c.check(y).all())


def test_registry_errors_and_registration():
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(C.boolean)
    with pytest.raises(NotImplementedError):
        D.biject_to(C.lower_cholesky)  # not bijective onto it: transform_to only
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        D.biject_to.register(int, lambda c: D.identity_transform)
    registry = type(D.biject_to)()
    registry.register(C.real)(lambda c: D.ExpTransform())
    assert isinstance(registry(C.real), D.ExpTransform)
    # A TransformedDistribution through biject_to: a density on the constraint.
    base = D.Independent(D.Normal(t64(np.zeros(2)), t64(np.ones(2))), 1)
    d = D.TransformedDistribution(base, D.biject_to(C.simplex))
    assert d.event_shape == (3,) and bool(C.simplex.check(d.sample((5,))).all())


@pytest.mark.torch
@pytest.mark.parametrize("name", [*CASES, *TRANSFORM_ONLY])
def test_same_transforms_as_torch(name):
    torch = pytest.importorskip("torch")
    make, shape = {**CASES, **TRANSFORM_ONLY}[name]
    x = RNG.standard_normal(shape)
    for registry in ("biject_to", "transform_to"):
        if registry == "biject_to" and name in TRANSFORM_ONLY:
            continue
        ours = getattr(D, registry)(make(C))
        theirs = getattr(torch.distributions, registry)(make(torch.distributions.constraints))
        assert repr(ours).replace(" ", "") == repr(theirs).replace(" ", "")
        np.testing.assert_allclose(ours(t64(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-12, atol=1e-14)
