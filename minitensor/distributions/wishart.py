"""``Wishart(df, covariance_matrix | precision_matrix | scale_tril)`` over p x p positive-definite matrices
(PyTorch's): density |X|^((nu - p - 1) / 2) exp(-tr(V^-1 X) / 2) / (2^(nu p / 2) |V|^(nu / 2) Gamma_p(nu / 2));
reparameterised samples by Bartlett's decomposition, X = (L A)(L A)^T with A lower triangular, A_ii^2 ~
chi^2(nu - i), A_ij ~ N(0, 1) below the diagonal."""
from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

from ..creation import arange, eye, randn, tensor
from ..functional import broadcast_shapes, cholesky_solve, diag_embed, digamma, slogdet, where
from ..functional.factorization import cholesky
from ..functional.special import mvlgamma
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .transforms_more import vec_to_tril_matrix
from .utils import lazy_property

__all__ = ["Wishart"]

MAX_TRY_CORRECTION = 10  # redraws of the samples that come out singular (PyTorch's default)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """sum_{i<p} digamma(x - i / 2), the derivative of the multivariate log-gamma."""
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype, device=x.device) / 2).sum(-1)


class Wishart(ExponentialFamily):
    """``df`` nu > p - 1 and one of the scale matrix V, its inverse, or its Cholesky factor L."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Tensor | float, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if not isinstance(df, Tensor):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = Size(broadcast_shapes(param.shape[:-2], df.shape))
            self.df = df.expand(*batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = "scale_tril" if scale_tril is not None else (
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(*batch_shape, -1, -1))
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2()

    def _chi2(self) -> Chi2:
        """chi^2(nu - i), i < p: the squares of Bartlett's diagonal."""
        L = self._unbroadcasted_scale_tril
        offsets = arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(self.df.unsqueeze(-1) - offsets.expand(*self._batch_shape, -1))

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new: Any = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2()
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.mT)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return self._full(cholesky_solve(eye(self._event_shape[-1], dtype=L.dtype, device=L.device), L))

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)  # no mode for nu <= p + 1
        return factor.reshape(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        """Var(X_ij) = nu (V_ij^2 + V_ii V_jj)."""
        V = self.covariance_matrix
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Size) -> Tensor:
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=float(finfo(L.dtype).eps))
        below = randn(*sample_shape, *self._batch_shape, p * (p - 1) // 2, dtype=L.dtype, device=L.device)
        chol = L @ (diag_embed(diag) + vec_to_tril_matrix(below, diag=-1))
        return chol @ chol.mT

    def rsample(self, sample_shape: Sequence[int] = Size(), max_try_correction: int | None = None) -> Tensor:
        """Bartlett draws; a draw that is singular to rounding (possible for nu < p) is redrawn, all such at
        once, up to ``max_try_correction`` rounds."""
        sample_shape = Size(sample_shape)
        tries = MAX_TRY_CORRECTION if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                sample = where(singular.unsqueeze(-1).unsqueeze(-1), self._bartlett_sampling(sample_shape), sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def _half_log_det_plus(self) -> Tensor:
        """p log 2 / 2 + log |L| (= (p log 2 + log |V|) / 2)."""
        p = self._event_shape[-1]
        return p * math.log(2) / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        nu, p = self.df, self._event_shape[-1]
        trace = cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * self._half_log_det_plus() - mvlgamma(nu / 2, p) + (nu - p - 1) / 2 * slogdet(value)[1]
                - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * self._half_log_det_plus() + mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        p = self._event_shape[-1]
        return (-self.precision_matrix / 2, (self.df - p - 1) / 2)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        x, y = natural_params
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x)[1] + math.log(2) * p) + mvlgamma(y + (p + 1) / 2, p)
