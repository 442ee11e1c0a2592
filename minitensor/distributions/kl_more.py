"""The KL pairs PyTorch registers for the count, heavy-tailed and exponential-family distributions
(its formulas): Poisson, Binomial, Geometric, Gumbel, HalfNormal, Pareto, ContinuousBernoulli against their own
kind, and any ExponentialFamily against its own type by the Bregman divergence of the log-normalizer."""
from __future__ import annotations

import math

from ..functional import lgamma, where
from ..tensor import Tensor
from .counts import Binomial, Geometric, Poisson
from .exp_family import ExponentialFamily
from .heavy_tails import EULER_GAMMA, Gumbel, HalfNormal, Pareto
from .kl import _kl_normal_normal, register_kl
from .unit_and_ratio import ContinuousBernoulli
from .utils import sum_rightmost

__all__: list[str] = []


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    """n (p log(p / q) + log((1 - p) / (1 - q))); inf where p's n exceeds q's."""
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + lgamma(1 + ct1) - ct3).exp()
    return t1 + ct1 * EULER_GAMMA + t3 - (1 + EULER_GAMMA)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p._base(), q._base())


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    """alpha_q log(s_p / s_q) - log(alpha_q / alpha_p) + alpha_q / alpha_p - 1; inf where s_p < s_q."""
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return where(p.scale < q.scale, math.inf, result)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    return t1 + t2 - q._cont_bern_log_norm() - (-q.probs).log1p()


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_theta, log_norm, grads = p._normalizer_and_grads()
    result = q._log_normalizer(*q._natural_params) - log_norm
    for pn, qn, g in zip(p_theta, q._natural_params, grads):
        result = result - sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result
