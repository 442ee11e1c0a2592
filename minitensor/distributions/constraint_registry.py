"""``biject_to`` and ``transform_to`` (PyTorch's constraint registries): from a constraint, a transform from
the reals (or real vectors) onto it. ``biject_to(c)`` is bijective, so that a TransformedDistribution's
log-det-Jacobian holds (HMC, variational families); ``transform_to(c)`` need not be (an optimiser's
unconstrained parameterisation). Keyed by the constraint's type, as PyTorch's, with PyTorch's registrations."""
from __future__ import annotations

from numbers import Number
from typing import Any, Callable

from . import constraints
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform, Transform
from .transforms_more import (CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
                              SoftmaxTransform, StickBreakingTransform, identity_transform)
from .transforms_structural import CatTransform, IndependentTransform, StackTransform

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

Factory = Callable[[Any], Transform]


class ConstraintRegistry:
    """{constraint type: factory(constraint) -> Transform}."""

    def __init__(self) -> None:
        self._registry: dict[type, Factory] = {}

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        """Register ``factory`` for a Constraint subclass or instance (its type); a decorator without it."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                            f"{constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*cs: Any) -> Callable[[Factory], Factory]:
    def decorator(factory: Factory) -> Factory:
        for c in cs:
            biject_to.register(c, factory)
            transform_to.register(c, factory)
        return factory
    return decorator


@_both(constraints.real)
def _transform_to_real(constraint: Any) -> Transform:
    return identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint: Any) -> Transform:
    return IndependentTransform(biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint: Any) -> Transform:
    return IndependentTransform(transform_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


# positive and nonnegative are instances of greater_than(_eq): the registration below replaces this one for
# them, as in PyTorch (biject_to(positive) is exp then + 0).
@_both(constraints.positive, constraints.nonnegative)
def _transform_to_positive(constraint: Any) -> Transform:
    return ExpTransform()


@_both(constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> Transform:
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, Number) and lower == 0 and isinstance(upper, Number) and upper == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> Transform:
    return StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> Transform:
    return SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: Any) -> Transform:
    return LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: Any) -> Transform:
    return PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: Any) -> Transform:
    return CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint: Any) -> Transform:
    return CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint: Any) -> Transform:
    return CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint: Any) -> Transform:
    return StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint: Any) -> Transform:
    return StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
