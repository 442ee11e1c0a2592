"""``Kumaraswamy``, ``InverseGamma``, ``FisherSnedecor`` and ``ContinuousBernoulli`` (PyTorch's parameters and
formulas; the first two in closed form where PyTorch composes transforms)."""
from __future__ import annotations

import math
from typing import Sequence

from ..creation import rand
from ..functional import digamma, igammac, lgamma, where
from ..nn.functional import binary_cross_entropy_with_logits
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .discrete import _one_of, _ProbsOrLogits
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .heavy_tails import EULER_GAMMA, _InverseCdfSampler
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli", "FisherSnedecor", "InverseGamma", "Kumaraswamy"]


def _kumaraswamy_moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X^n] = b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    return b * (lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)).exp()


class Kumaraswamy(_InverseCdfSampler):
    """Density a b x^(a-1) (1 - x^a)^(b-1) on [0, 1] (a = ``concentration1``, b = ``concentration0``)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    _param_like = "concentration1"

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        """((a - 1) / (a b - 1))^(1 / a) where a, b >= 1, else nan."""
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        return where((a < 1) | (b < 1), math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        a, b = self.concentration1, self.concentration0
        return a.log() + b.log() + (a - 1) * value.log() + (b - 1) * (-value.pow(a)).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        return -((-value.pow(self.concentration1)).log1p() * self.concentration0).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        inner = -((-value).log1p() / self.concentration0).expm1()  # 1 - (1 - u)^(1/b)
        return inner.pow(self.concentration1.reciprocal())

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + EULER_GAMMA
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


class InverseGamma(Distribution):
    """1 / X for X ~ Gamma(concentration a, rate b): density b^a x^(-a-1) exp(-b / x) / Gamma(a) on x > 0.
    Not a subclass of Gamma, so that kl_divergence does not take it for one."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        a = self.concentration
        return where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        return where(a > 2, self.rate.pow(2) / ((a - 1).pow(2) * (a - 2)), math.inf)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        return Gamma(self.concentration, self.rate, validate_args=False).rsample(sample_shape).reciprocal()

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        a, b = self.concentration, self.rate
        return a * b.log() - lgamma(a) - (a + 1) * value.log() - b / value

    def cdf(self, value: Tensor) -> Tensor:
        return igammac(self.concentration, self.rate / self._checked(value))

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)


class FisherSnedecor(Distribution):
    """F(df1, df2): (X1 / df1) / (X2 / df2), X_i ~ chi^2(df_i)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Tensor | float, df2: Tensor | float, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return where(self.df2 > 2, self.df2 / (self.df2 - 2), math.nan)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self) -> Tensor:
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return where(d2 > 4, var, math.nan)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """Gamma(df1 / 2, df1) / Gamma(df2 / 2, df2), both reparameterised."""
        tiny = float(finfo(self.df1.dtype).tiny)
        x1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False).rsample(sample_shape)
        x2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False).rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        return t1 + t2 - (ct1 + ct2) * (ct3 * value).log1p()


class ContinuousBernoulli(ExponentialFamily, _ProbsOrLogits):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1], C(p) = 2 atanh(1 - 2p) / (1 - 2p) (2 at p = 1/2). Near
    p = 1/2 (within ``lims``) the quotients are 0 / 0 and Taylor polynomials in (p - 1/2) take over, as
    PyTorch."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 lims: tuple[float, float] = (0.499, 0.501), validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            (probs_t,) = broadcast_all(probs)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(probs_t).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(probs_t)
        else:
            (self.logits,) = broadcast_all(logits)
        self._lims = lims
        super().__init__(self._param.shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """log C(p)."""
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, 0.0)
        above = where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(cut <= 0.5, (-2.0 * below).log1p(),
                                                                    (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device))

    def log_prob(self, value: Tensor) -> Tensor:
        logits, value = broadcast_all(self.logits, self._checked(value))
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inside = (((-cut) + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return where(self._outside_unstable_region(), inside, value)

    def entropy(self) -> Tensor:
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x = natural_params[0]
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
