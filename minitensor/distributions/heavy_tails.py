"""More univariate continuous distributions: ``Cauchy``, ``HalfNormal``, ``HalfCauchy``, ``Gumbel``,
``Weibull``, ``Pareto`` (PyTorch's parameters and formulas, written in closed form: PyTorch builds the last five
as ``TransformedDistribution``s, whose values these equal). Samples are inverse CDFs of uniform draws, so they
are reparameterised."""
from __future__ import annotations

import math
from typing import Sequence

from ..creation import full
from ..functional import atan, isclose, lgamma, tan, where
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .continuous import Normal, _LocScale, _uniform
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy", "GeneralizedPareto", "Gumbel", "HalfCauchy", "HalfNormal", "Pareto", "Weibull"]

EULER_GAMMA = 0.57721566490153286060


class _InverseCdfSampler(Distribution):
    """rsample = icdf(u), u ~ U[0, 1) of the sample's shape (u kept off 0 where the icdf is infinite there)."""
    has_rsample = True
    _param_like: str

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        like = getattr(self, self._param_like)
        u = _uniform(like, self._extended_shape(sample_shape))
        return self.icdf(u.clamp(min=float(finfo(like.dtype).tiny)))


class Cauchy(_InverseCdfSampler, _LocScale):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)): no mean (nan) and infinite variance."""
    _param_like = "loc"

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def log_prob(self, value: Tensor) -> Tensor:
        z = (self._checked(value) - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - z.pow(2).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return atan((self._checked(value) - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class _Half(_InverseCdfSampler):
    """|X| for X symmetric about 0 with ``scale``: density twice X's on x >= 0, cdf 2 F(x) - 1."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    _param_like = "scale"

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        (self.scale,) = broadcast_all(scale)
        super().__init__(self.scale.shape, validate_args=validate_args)

    def _base(self) -> Distribution:
        raise NotImplementedError

    @property
    def base_dist(self) -> Distribution:
        """The symmetric distribution folded (PyTorch's ``base_dist``)."""
        return self._base()

    @property
    def mode(self) -> Tensor:
        return self.scale.new_zeros(self.scale.shape)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        return 2 * self.base_dist.cdf(self._checked(value)) - 1

    def icdf(self, value: Tensor) -> Tensor:
        return self.base_dist.icdf((value + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Half):
    """|N(0, scale^2)|."""

    def _base(self) -> Normal:
        return Normal(0.0 * self.scale, self.scale, validate_args=False)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    """|Cauchy(0, scale)|: infinite mean and variance."""

    def _base(self) -> Cauchy:
        return Cauchy(0.0 * self.scale, self.scale, validate_args=False)

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self) -> Tensor:
        return self.mean


class Gumbel(_InverseCdfSampler, _LocScale):
    """Density exp(-(z + exp(-z))) / scale, z = (x - loc) / scale; cdf exp(-exp(-z))."""
    _param_like = "loc"

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def stddev(self) -> Tensor:
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def log_prob(self, value: Tensor) -> Tensor:
        y = (self.loc - self._checked(value)) / self.scale
        return y - y.exp() - self.scale.log()

    def cdf(self, value: Tensor) -> Tensor:
        return (-(-(self._checked(value) - self.loc) / self.scale).exp()).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + EULER_GAMMA)


class Weibull(_InverseCdfSampler):
    """Density (k / s) (x / s)^(k-1) exp(-(x / s)^k) on x > 0 (``scale`` s, ``concentration`` k)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    _param_like = "scale"

    def __init__(self, scale: Tensor | float, concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        super().__init__(self.scale.shape, validate_args=validate_args)

    @property
    def concentration_reciprocal(self) -> Tensor:
        return self.concentration.reciprocal()

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (lgamma(1 + 2 * r).exp() - (2 * lgamma(1 + r)).exp())

    def log_prob(self, value: Tensor) -> Tensor:
        z = self._checked(value) / self.scale
        k = self.concentration
        return (k / self.scale).log() + (k - 1) * z.log() - z.pow(k)

    def cdf(self, value: Tensor) -> Tensor:
        return -(-(self._checked(value) / self.scale).pow(self.concentration)).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        return self.scale * (-(-value).log1p()).pow(self.concentration_reciprocal)

    def entropy(self) -> Tensor:
        r = self.concentration_reciprocal
        return EULER_GAMMA * (1 - r) + (self.scale * r).log() + 1


class Pareto(_InverseCdfSampler):
    """Density alpha scale^alpha / x^(alpha + 1) on x >= scale."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    _param_like = "scale"

    def __init__(self, scale: Tensor | float, alpha: Tensor | float, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(self.scale.shape, validate_args=validate_args)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)  # inf for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)  # inf for alpha <= 2
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return self.alpha.log() + self.alpha * self.scale.log() - (self.alpha + 1) * value.log()

    def cdf(self, value: Tensor) -> Tensor:
        return 1 - (self.scale / self._checked(value)).pow(self.alpha)

    def icdf(self, value: Tensor) -> Tensor:
        return self.scale * ((-value).log1p() / -self.alpha).exp()

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class GeneralizedPareto(_InverseCdfSampler):
    """GPD(loc, scale, concentration xi): survival (1 + xi z)^(-1/xi), z = (x - loc) / scale (exp(-z) at
    xi = 0); support [loc, loc - scale / xi] for xi < 0, [loc, inf) otherwise. xi within isclose of 0 takes
    the exponential forms, as PyTorch."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    _param_like = "loc"

    def __init__(self, loc: Tensor | float, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def support(self) -> constraints.Constraint:
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)

    def _safe(self) -> tuple[Tensor, Tensor]:
        """(xi == 0 to isclose, xi with 1 there): the 1 keeps the unused branch finite."""
        eq_zero = isclose(self.concentration, self.concentration.new_zeros(()))
        return eq_zero, where(eq_zero, 1.0, self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        z = (self._checked(value) - self.loc) / self.scale
        eq_zero, xi = self._safe()
        y = 1 / xi + 1
        nonzero = where(y == 0, y, y * (xi * z).log1p())
        return -self.scale.log() - where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        z = (self._checked(value) - self.loc) / self.scale
        eq_zero, xi = self._safe()
        return where(eq_zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, xi = self._safe()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / xi * (-xi * logu).expm1()
        return where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = where(valid, self.concentration, 0.25)
        return where(valid, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)), math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(*self._batch_shape)
