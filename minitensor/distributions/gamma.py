"""The gamma family: ``Gamma``, ``Chi2``, ``Dirichlet`` and ``Beta`` (PyTorch's parameters and formulas).

Samples are reparameterised through ``functional.random.standard_gamma``, whose gradient with respect to the
concentration is the implicit one, dx/dalpha = -(dP/dalpha) / p at the draw (P the CDF, p the density). A
Dirichlet draw is normalised gammas, x = g / sum(g), differentiated through that quotient (PyTorch instead
differentiates its Beta marginals: a different, equally unbiased, per-sample gradient); Beta is the first
coordinate of a two-dimensional Dirichlet, as in PyTorch."""
from __future__ import annotations

from typing import Sequence

from ..functional import digamma, igamma, lgamma, stack, where, xlogy
from ..functional.random import standard_gamma
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Beta", "Chi2", "Dirichlet", "Gamma"]


def _expand_params(self: Distribution, new: Distribution, names: Sequence[str], batch_shape: Size) -> None:
    """``new``'s parameters ``names`` as ``self``'s expanded to ``batch_shape`` (plus their event dims)."""
    for name in names:
        param = getattr(self, name)
        setattr(new, name, param.expand(batch_shape + param.shape[len(self.batch_shape):]))


class Gamma(Distribution):
    """Gamma(concentration a, rate b): density b^a x^(a-1) exp(-b x) / Gamma(a) on x >= 0."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        _expand_params(self, new, ("concentration", "rate"), Size(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=float(finfo(value.dtype).tiny))  # a quotient that underflows stays > 0

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        a, b = self.concentration, self.rate
        return xlogy(a, b) + xlogy(a - 1, value) - b * value - lgamma(a)

    def cdf(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return igamma(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Dirichlet(Distribution):
    """Dirichlet(concentration a) over the simplex of the last dim: density
    Gamma(sum a) / prod Gamma(a_i) * prod x_i^(a_i - 1). Batch shape a.shape[:-1], event shape a.shape[-1:]."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        _expand_params(self, new, ("concentration",), Size(batch_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """(a - 1)+ normalised; where every a_i < 1 (the density peaks at the corners) the first corner, as
        PyTorch's argmax over the NaNs of 0 / 0 picks."""
        excess = (self.concentration - 1).clamp(min=0.0)
        at_corner = (self.concentration < 1).all(-1, keepdim=True)
        mode = excess / where(at_corner, 1.0, excess.sum(-1, keepdim=True))  # no 0 / 0, whose gradient is nan
        corner = excess.new_zeros(excess.shape[-1:])
        corner[0] = 1.0
        return where(at_corner, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        gammas = standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        x = gammas / gammas.sum(-1, keepdim=True)
        return x.clamp(min=float(finfo(x.dtype).tiny))  # a coordinate that underflows stays > 0

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    def entropy(self) -> Tensor:
        a = self.concentration
        k, total = a.shape[-1], a.sum(-1)
        return lgamma(a).sum(-1) - lgamma(total) - (k - total) * digamma(total) - ((a - 1.0) * digamma(a)).sum(-1)


class Beta(Distribution):
    """Beta(concentration1 a, concentration0 b): density x^(a-1) (1-x)^(b-1) / B(a, b) on [0, 1]."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new._dirichlet = self._dirichlet.expand(batch_shape)  # type: ignore[attr-defined]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

