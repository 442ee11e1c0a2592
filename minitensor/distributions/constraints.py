"""The constraints that ``validate_args`` checks (PyTorch's ``torch.distributions.constraints``, as far as the
distributions here use them): ``check(value)`` is a bool tensor, True where ``value`` satisfies the constraint;
the reprs are PyTorch's (they appear in the ValueError messages)."""
from __future__ import annotations

from typing import Any

from ..functional import isclose
from ..functional.factorization import eigvalsh
from ..tensor import Tensor
from ..type_info import finfo

__all__ = ["Constraint", "boolean", "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
           "less_than", "lower_cholesky", "nonnegative", "one_hot", "positive", "positive_definite", "real",
           "real_vector", "simplex", "unit_interval"]
__all__ += ["cat", "corr_cholesky", "half_open_interval", "multinomial", "nonnegative_integer", "positive_integer",
            "stack"]
__all__ += ["MixtureSameFamilyConstraint", "dependent", "dependent_property", "is_dependent", "lower_triangular",
            "positive_semidefinite", "square", "symmetric"]


class Constraint:
    """A region of values; ``event_dim`` is how many rightmost dims make one event (``check`` reduces them)."""
    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Bounded(Constraint):
    """A constraint with number or tensor bounds, printed as PyTorch's ``Name(lower_bound=..., ...)``."""
    bounds: tuple[str, ...] = ()

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)}" for name in self.bounds)
        return f"{type(self).__name__[1:]}({args})"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on the distribution (PyTorch's ``dependent``): no check;
    ``is_discrete`` / ``event_dim`` only where given."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> _Dependent:
        """A copy with these attributes (the unset ones kept)."""
        is_discrete = self._is_discrete if is_discrete is NotImplemented else is_discrete
        event_dim = self._event_dim if event_dim is NotImplemented else event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """``@constraints.dependent_property(is_discrete=..., event_dim=...)``: a property (a distribution's
    ``support`` computed from its parameters) that is also a dependent constraint on the class."""

    def __init__(self, fn: Any = None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn: Any) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a ``dependent`` placeholder (its check cannot run)."""
    return isinstance(constraint, _Dependent)


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # False for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _GreaterThan(_Bounded):
    bounds = ("lower_bound",)

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower_bound


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound


class _LessThan(_Bounded):
    bounds = ("upper_bound",)

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound


class _Interval(_Bounded):
    bounds = ("lower_bound", "upper_bound")

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value <= self.upper_bound)


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & super().check(value)


class _IntegerGreaterThan(_Bounded):
    is_discrete = True
    bounds = ("lower_bound",)

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Multinomial(Constraint):
    """Nonnegative counts along the last dim summing to at most ``upper_bound`` (PyTorch's check)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _IndependentConstraint(Constraint):
    """``base_constraint`` over events of ``reinterpreted_batch_ndims`` more dims: all must hold."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        return result.reshape(*result.shape[:result.dim() - n], -1).all(-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower triangular with positive diagonal and rows of unit norm: Cholesky factors of correlation
    matrices (PyTorch's tolerance on the norms)."""
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = float(finfo(value.dtype).eps) * value.shape[-1] * 10
        unit_rows = ((value.pow(2).sum(-1).sqrt() - 1).abs() <= tol).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Cat(Constraint):
    """Constraints applied to consecutive slices of ``lengths`` along ``dim`` (PyTorch's ``cat``)."""

    def __init__(self, cseq: list[Constraint], dim: int = 0, lengths: list[int] | None = None) -> None:
        self.cseq, self.dim = list(cseq), dim
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        from ..functional import cat as cat_
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return cat_(checks, self.dim)


class _Stack(Constraint):
    """One constraint per index along ``dim`` (PyTorch's ``stack``)."""

    def __init__(self, cseq: list[Constraint], dim: int = 0) -> None:
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        from ..functional import stack as stack_
        return stack_([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return value.new_full(value.shape[:-2], value.shape[-2] == value.shape[-1]).bool()


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return isclose(value, value.mT, atol=1e-6).reshape(*value.shape[:-2], -1).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if not bool(symmetric.all()):
            return symmetric
        return (eigvalsh(value) >= 0).all(-1)


class MixtureSameFamilyConstraint(Constraint):
    """A component support checked against every component of a MixtureSameFamily, all required (PyTorch's)."""

    def __init__(self, base_constraint: Constraint) -> None:
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r})"


class _PositiveDefinite(Constraint):
    """Square, symmetric (to 1e-6) and with positive eigenvalues (PyTorch tries a Cholesky factorization; the
    two agree but on matrices singular to rounding)."""
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        if value.shape[-1] != value.shape[-2]:
            return value.new_zeros(value.shape[:-2]).bool()
        symmetric = isclose(value, value.mT, atol=1e-6).reshape(*value.shape[:-2], -1).all(-1)
        if not bool(symmetric.all()):
            return symmetric
        return (eigvalsh(value) > 0).all(-1)


dependent = _Dependent()
dependent_property = _DependentProperty
real = _Real()
real_vector = _IndependentConstraint(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
one_hot = _OneHot()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
positive_semidefinite = _PositiveSemidefinite()
square = _Square()
symmetric = _Symmetric()
lower_triangular = _LowerTriangular()
corr_cholesky = _CorrCholesky()
cat = _Cat
stack = _Stack
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
half_open_interval = _HalfOpenInterval
multinomial = _Multinomial
independent = _IndependentConstraint
