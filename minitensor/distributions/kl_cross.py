"""The KL pairs between different families that PyTorch registers (its formulas): closed forms, and inf where
p's support leaves q's (a Normal against an Exponential...)."""
from __future__ import annotations

import math

from ..creation import full_like
from ..functional import digamma, lgamma, where, xlogy
from ..tensor import Tensor
from .continuous import Exponential, Laplace, Normal, Uniform
from .counts import Binomial, Poisson
from .discrete import Bernoulli
from .gamma import Beta, Gamma
from .heavy_tails import EULER_GAMMA, Gumbel, Pareto
from .kl import register_kl
from .unit_and_ratio import ContinuousBernoulli

__all__: list[str] = []


def _infinite_like(t: Tensor) -> Tensor:
    return full_like(t, math.inf)


def _x_log_x(t: Tensor) -> Tensor:
    return xlogy(t, t)


def _register_inf(p_type: type, *q_types: type) -> None:
    """KL = inf for each pair: the support of p is not inside q's."""
    param = {Beta: "concentration1", ContinuousBernoulli: "probs", Exponential: "rate", Gamma: "concentration",
             Gumbel: "loc", Laplace: "loc", Normal: "loc", Pareto: "scale", Poisson: "rate"}[p_type]
    for q_type in q_types:
        register_kl(p_type, q_type)(lambda p, q: _infinite_like(getattr(p, param)))


_register_inf(Beta, Pareto)
_register_inf(ContinuousBernoulli, Pareto)
_register_inf(Exponential, Beta, ContinuousBernoulli, Pareto, Uniform)
_register_inf(Gamma, Beta, ContinuousBernoulli, Pareto, Uniform)
_register_inf(Gumbel, Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
_register_inf(Laplace, Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
_register_inf(Normal, Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
_register_inf(Pareto, Beta, ContinuousBernoulli, Uniform)
_register_inf(Poisson, Bernoulli, Binomial)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Bernoulli, q: Poisson) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _kl_to_continuous_bernoulli(p: Beta | Uniform, q: ContinuousBernoulli) -> Tensor:
    """-H(p) - E_p[x] logit(q) - log(1 - q) - log C(q)."""
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return _kl_to_continuous_bernoulli(p, q)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Beta, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Beta, q: Gamma) -> Tensor:
    a, b = p.concentration1, p.concentration0
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (digamma(a) - digamma(a + b))
    return -p.entropy() + t2 - t3 + q.rate * a / (a + b)


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Beta, q: Normal) -> Tensor:
    e_beta = p.mean
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (p.concentration1 + p.concentration0 + 1) + e_beta.pow(2)) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * e_beta + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Beta, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return where((q.low > 0.0) | (q.high < 1.0), math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).pow(2)) + q.scale.log()
    t3 = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (2.0 * q.scale.pow(2))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    return where((q.low >= 0.0) | (q.high <= 1.0), math.inf, result)  # PyTorch's test, bounds included


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Exponential, q: Gamma) -> Tensor:
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return t1 + ratio + lgamma(q.concentration) + q.concentration * EULER_GAMMA - (1 + EULER_GAMMA)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    return scale_rate_prod.log() - 1 - loc_scale_ratio + t2 + scale_rate_prod.reciprocal()


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Gamma, q: Exponential) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    a = p.concentration
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = (a - 1) * digamma(a) - lgamma(a) - a
    t2 = beta_scale_prod.log() + a / beta_scale_prod
    t3 = loc_scale_ratio.exp() * (1 + beta_scale_prod.reciprocal()).pow(-a) - loc_scale_ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Gamma, q: Normal) -> Tensor:
    a = p.concentration
    var_normal, beta_sqr = q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - a - lgamma(a)
    t2 = 0.5 * (a.pow(2) + a) / beta_sqr
    t3 = q.loc * a / p.rate
    return t1 + (a - 1) * digamma(a) + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * EULER_GAMMA - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (EULER_GAMMA + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Laplace, q: Normal) -> Tensor:
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return -t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + mean_scale_ratio - loc_scale_ratio + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    scale_rate_prod = p.scale * q.rate
    result = (p.alpha / scale_rate_prod).log() - p.alpha.reciprocal() + p.alpha * scale_rate_prod / (p.alpha - 1) - 1
    return where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return where(p.alpha <= 1, math.inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return where(p.alpha <= 2, math.inf, t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Uniform, q: Beta) -> Tensor:
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = lgamma(q.concentration1) + lgamma(q.concentration0) - lgamma(q.concentration1 + q.concentration0)
    return where((p.high > 1.0) | (p.low < 0.0), math.inf, t3 + t4 - width.log() - t2)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    result = _kl_to_continuous_bernoulli(p, q)
    return where((p.high >= 1.0) | (p.low <= 0.0), math.inf, result)  # PyTorch's test, bounds included


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Uniform, q: Exponential) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return where(p.low < 0.0, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Uniform, q: Gamma) -> Tensor:
    width = p.high - p.low
    t2 = lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return where(p.low < 0.0, math.inf, -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    common_term = q.scale / (p.high - p.low)
    high_loc_diff, low_loc_diff = (p.high - q.loc) / q.scale, (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    return t1 - common_term * ((-high_loc_diff).exp() - (-low_loc_diff).exp())
