"""More of PyTorch's transforms: the pointwise ``AbsTransform``, ``SoftplusTransform``,
``CumulativeDistributionTransform``; the vector / matrix ones ``SoftmaxTransform``, ``StickBreakingTransform``,
``LowerCholeskyTransform``, ``PositiveDefiniteTransform``, ``CorrCholeskyTransform``; ``identity_transform``
(PyTorch's formulas). The structural ones are in transforms_structural.py."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..creation import arange, eye, full, ones, tril_indices
from ..dtypes import int64
from ..functional import diag_embed
from ..functional.factorization import cholesky
from ..nn.functional import logsigmoid, pad, softplus
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .transforms import ComposeTransform, Transform

__all__ = ["AbsTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
           "identity_transform"]


class AbsTransform(Transform):
    """y = |x| (not bijective: the inverse picks y itself)."""
    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); x = y + log(-expm1(-y)); log|dy/dx| = -softplus(-x)."""
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)


class CumulativeDistributionTransform(Transform):
    """y = F(x), F a distribution's cdf: onto the unit interval, log|dy/dx| = log p(x)."""
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)


def _vector_shape(shape: Sequence[int]) -> tuple[int, ...]:
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return tuple(shape)


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim (not bijective: x is known up to a constant; the inverse is log y)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x: Tensor) -> Tensor:
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return _vector_shape(shape)

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex: z_k = sigmoid(x_k - log(K - k)) breaks off z_k of the stick left,
    y_k = z_k prod_{i<k} (1 - z_i), y_K the rest (x = 0 maps to the centre)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _offset_log(n: int, like: Tensor) -> Tensor:
        """log(n + 1 - k), k = 1..n."""
        return (n + 1 - ones(n, dtype=like.dtype, device=like.device).cumsum(-1)).log()

    def _call(self, x: Tensor) -> Tensor:
        info = finfo(x.dtype)
        z = (x - self._offset_log(x.shape[-1], x)).sigmoid().clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + self._offset_log(y_crop.shape[-1], y)  # log(K - k) again, k < K

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        x = x - self._offset_log(x.shape[-1], x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        shape = _vector_shape(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        shape = _vector_shape(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """A square matrix to a lower-triangular one with positive diagonal: the strict lower part kept, the
    diagonal exponentiated (not bijective on all matrices)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """L L^T with L = LowerCholeskyTransform()(x); the inverse through the Cholesky factor."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x: Tensor) -> Tensor:
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y: Tensor) -> Tensor:
        return LowerCholeskyTransform().inv(cholesky(y))


def _tril_flat_indices(n: int, diag: int) -> Tensor:
    """Positions in the flattened n x n matrix of its lower triangle below diagonal ``diag``, row by row."""
    rows, cols = tril_indices(n, n, offset=diag)
    return rows * n + cols


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The last dim's entries, row by row, into the lower triangle (below diagonal ``diag``) of an n x n,
    zeros elsewhere: one gather from [vec, 0], so the gradient flows back to vec."""
    m = vec.shape[-1]
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2)
    source = full((n * n,), m, dtype=int64, device=vec.device)  # index m: the padded zero
    source[_tril_flat_indices(n, diag).to(vec.device)] = arange(m, device=vec.device)
    padded = pad(vec, [0, 1], value=0.0)
    return padded[..., source].reshape(*vec.shape[:-1], n, n)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (below diagonal ``diag``) of the last two dims, row by row."""
    n = mat.shape[-1]
    return mat.reshape(*mat.shape[:-2], n * n)[..., _tril_flat_indices(n, diag).to(mat.device)]


class CorrCholeskyTransform(Transform):
    """D (D - 1) / 2 reals to the Cholesky factor of a D x D correlation matrix: tanh into (-1, 1), then each
    row's entries as stick-breaking fractions of the row's unit norm."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x: Tensor) -> Tensor:
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        z1m_cumprod_sqrt = (1 - r.pow(2)).sqrt().cumprod(-1)
        eye_ = eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye_) * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        shape = _vector_shape(shape)
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (D, D)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return tuple(shape[:-2]) + (D * (D - 1) // 2,)


identity_transform = ComposeTransform([])  # PyTorch's: the empty composition, y = x
