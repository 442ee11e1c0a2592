"""The KL pairs of LowRankMultivariateNormal (PyTorch's): against itself and against MultivariateNormal either
way, KL = (log|S_q| - log|S_p| + tr(S_q^-1 S_p) + |mu_q - mu_p|^2_{S_q^-1} - n) / 2, with S_q^-1 by Woodbury
(D^-1 - A^T A, A = L_C^-1 W^T D^-1) where q is low-rank, so no n x n inverse is formed."""
from __future__ import annotations

from ..functional import broadcast_shapes, diag_embed
from ..functional.solve import solve_triangular
from ..tensor import Tensor
from .kl import register_kl
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _lowrank_logdet, _lowrank_mahalanobis
from .multivariate_normal import MultivariateNormal, batch_mahalanobis

__all__: list[str] = []


def _trace_xxt(x: Tensor) -> Tensor:
    """tr(X X^T) = the sum of squares over the last two dims."""
    return x.pow(2).sum((-2, -1))


def _check_event(p: object, q: object, what: str) -> None:
    if p.event_shape != q.event_shape:  # type: ignore[attr-defined]
        raise ValueError(f"KL-divergence between two {what} with different event shapes cannot be computed")


def _woodbury_factor(q: LowRankMultivariateNormal) -> Tensor:
    """A with S_q^-1 = D_q^-1 - A^T A."""
    qWt_qDinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, qWt_qDinv, upper=False)


def _q_lowrank_terms(q: LowRankMultivariateNormal, p_loc: Tensor) -> tuple[Tensor, Tensor]:
    """log|S_q| and the Mahalanobis term |mu_q - mu_p|^2 in S_q^-1."""
    log_det = _lowrank_logdet(q._unbroadcasted_cov_diag, q._capacitance_tril)
    maha = _lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p_loc,
                                q._capacitance_tril)
    return log_det, maha


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event(p, q, "Low Rank Multivariate Normals")
    q_log_det, term3 = _q_lowrank_terms(q, p.loc)
    term1 = q_log_det - _lowrank_logdet(p._unbroadcasted_cov_diag, p._capacitance_tril)
    A = _woodbury_factor(q)
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term2 = ((pD / qD).sum(-1) + _trace_xxt(pW * qD.rsqrt().unsqueeze(-1))
             - _trace_xxt(A * pD.sqrt().unsqueeze(-2)) - _trace_xxt(A @ pW))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_event(p, q, "(Low Rank) Multivariate Normals")
    q_log_det, term3 = _q_lowrank_terms(q, p.loc)
    term1 = q_log_det - 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    A = _woodbury_factor(q)
    L = p._unbroadcasted_scale_tril
    term2 = _trace_xxt(L * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)) - _trace_xxt(A @ L)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    _check_event(p, q, "(Low Rank) Multivariate Normals")
    term1 = (2 * q._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
             - _lowrank_logdet(p._unbroadcasted_cov_diag, p._capacitance_tril))
    term3 = batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    n, m = p.event_shape[0], p.cov_factor.shape[-1]
    batch = tuple(broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2]))
    q_tril = q._unbroadcasted_scale_tril.expand(*batch, n, n)
    term21 = _trace_xxt(solve_triangular(q_tril, p._unbroadcasted_cov_factor.expand(*batch, n, m), upper=False))
    p_diag = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(*batch, n, n)
    term22 = _trace_xxt(solve_triangular(q_tril, p_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)
