"""``LowRankMultivariateNormal``: N(loc, W W^T + diag(D)) with W of shape (n, m), m << n (PyTorch's), scored
through the m x m capacitance matrix C = I + W^T D^-1 W (Woodbury and the matrix determinant lemma), so the
n x n covariance is never factored."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..creation import eye, randn
from ..functional import broadcast_tensors, diag_embed
from ..functional.factorization import cholesky
from ..functional.solve import solve_triangular
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _Located
from .multivariate_normal import batch_mahalanobis
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """The Cholesky factor of C = I + W^T D^-1 W."""
    m = W.shape[-1]
    K = (W.mT / D.unsqueeze(-2)) @ W
    return cholesky(K + eye(m, dtype=W.dtype, device=W.device))


def _lowrank_logdet(D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """log|W W^T + D| = log|C| + sum log D (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2 (Woodbury)."""
    Wt_Dinv_x = ((W.mT / D.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / D).sum(-1) - batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(_Located):
    """``loc`` (*b, n), ``cov_factor`` W (*b, n, m), ``cov_diag`` D (*b, n) > 0: covariance W W^T + diag(D)."""
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new: Any = type(self).__new__(type(self)) if _instance is None else _instance
        loc_shape = Size(batch_shape) + self.event_shape
        new.loc, new.cov_diag = self.loc.expand(loc_shape), self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def variance(self) -> Tensor:
        diag = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return diag.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        """sqrt(D) chol(I + D^-1/2 W W^T D^-1/2): the Cholesky factor of the covariance."""
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / d_sqrt
        K = scaled @ scaled.mT + eye(n, dtype=scaled.dtype, device=scaled.device)
        return self._full(d_sqrt * cholesky(K))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        return self._full(W @ W.mT + diag_embed(self._unbroadcasted_cov_diag))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """D^-1 - A^T A, A = L_C^-1 W^T D^-1 (Woodbury)."""
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return self._full(diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """loc + W eps_W + sqrt(D) eps_D with eps_W of m, eps_D of n standard normals."""
        shape = self._extended_shape(sample_shape)
        eps_W = randn(*shape[:-1], self.cov_factor.shape[-1], dtype=self.loc.dtype, device=self.loc.device)
        eps_D = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_W.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value: Tensor) -> Tensor:
        diff = self._checked(value) - self.loc
        M = _lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, diff,
                                 self._capacitance_tril)
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self) -> Tensor:
        log_det = _lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(*self._batch_shape)
