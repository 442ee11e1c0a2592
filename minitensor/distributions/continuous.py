"""The univariate continuous distributions: ``Normal``, ``Laplace``, ``Uniform``, ``Exponential`` (PyTorch's
formulas; reparameterised samples from minitensor's generators, so ``manual_seed`` makes them repeat)."""
from __future__ import annotations

import math
from typing import Sequence

from ..creation import rand, randn
from ..functional import erf, erfinv
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution, _Located
from .utils import broadcast_all

__all__ = ["Exponential", "Laplace", "Normal", "Uniform"]


def _uniform(like: Tensor, shape: Size, low: float = 0.0, high: float = 1.0) -> Tensor:
    """U[low, high) of ``shape`` in ``like``'s dtype and device."""
    u = rand(shape, dtype=like.dtype, device=like.device)
    return u if (low, high) == (0.0, 1.0) else u * (high - low) + low


class _LocScale(_Located):
    """A location-scale family on the real line: parameters ``loc`` (real) and ``scale`` (> 0), broadcast."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)


class Normal(_LocScale):
    """N(loc, scale^2): density exp(-(x - loc)^2 / (2 scale^2)) / (scale sqrt(2 pi))."""

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return -((value - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Laplace(_LocScale):
    """Density exp(-|x - loc| / scale) / (2 scale)."""

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        # u in [eps - 1, 1): log1p(-|u|) stays finite (PyTorch's draw).
        u = _uniform(self.loc, self._extended_shape(sample_shape), float(finfo(self.loc.dtype).eps) - 1, 1.0)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        diff = self._checked(value) - self.loc
        return 0.5 - 0.5 * diff.sign() * (-diff.abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Uniform(Distribution):
    """U[low, high): density 1 / (high - low) on [low, high)."""
    has_rsample = True

    def __init__(self, low: Tensor | float, high: Tensor | float, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @property
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        return self.low + _uniform(self.low, self._extended_shape(sample_shape)) * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        inside = (self.low <= value) & (self.high > value)
        return inside.to(self.low.dtype).log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


class Exponential(Distribution):
    """Density rate exp(-rate x) on x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate.new_zeros(self.rate.shape)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        # -log(1 - u) with u in [0, 1): a standard exponential draw that is never inf.
        return -(-_uniform(self.rate, self._extended_shape(sample_shape))).log1p() / self.rate

    def log_prob(self, value: Tensor) -> Tensor:
        return self.rate.log() - self.rate * self._checked(value)

    def cdf(self, value: Tensor) -> Tensor:
        return 1 - (-self.rate * self._checked(value)).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

