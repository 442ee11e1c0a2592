"""More of PyTorch's transforms: the pointwise ``AbsTransform``, ``SoftplusTransform``,
``CumulativeDistributionTransform``; the vector / matrix ones ``SoftmaxTransform``, ``StickBreakingTransform``,
``LowerCholeskyTransform``, ``PositiveDefiniteTransform``, ``CorrCholeskyTransform``; and the structural
``ReshapeTransform``, ``IndependentTransform``, ``CatTransform``, ``StackTransform`` (PyTorch's formulas)."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..creation import arange, eye, full, ones, tril_indices
from ..dtypes import int64
from ..functional import cat, diag_embed, stack
from ..functional.factorization import cholesky
from ..nn.functional import logsigmoid, pad, softplus
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .transforms import ComposeTransform, Transform
from .utils import sum_rightmost

__all__ = ["AbsTransform", "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "identity_transform"]


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


class ReshapeTransform(Transform):
    """The rightmost ``in_shape`` dims reshaped to ``out_shape`` (log-det 0)."""
    bijective = True

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int], cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Tensor) -> Tensor:
        return x.reshape(*x.shape[:x.dim() - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.reshape(*y.shape[:y.dim() - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap(shape: Sequence[int], old: Size, new: Size) -> tuple[int, ...]:
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
        return tuple(shape[:cut]) + tuple(new)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self._swap(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """``base_transform`` over events of ``reinterpreted_batch_ndims`` more dims: its log-det summed there."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class CatTransform(Transform):
    """``tseq[i]`` on consecutive slices of ``lengths[i]`` along ``dim`` (a loop over the transforms)."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def _slices(self, z: Tensor, name: str) -> list[Tensor]:
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {z.dim()} dimensions")
        if z.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal length {self.length}")
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [z.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _call(self, x: Tensor) -> Tensor:
        return cat([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        parts = []
        for t, xs, ys in zip(self.transforms, self._slices(x, "x"), self._slices(y, "y")):
            parts.append(sum_rightmost(t.log_abs_det_jacobian(xs, ys), self.event_dim - t.event_dim))
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:
            return cat(parts, dim)
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total


class StackTransform(Transform):
    """``tseq[i]`` on index i along ``dim`` (a loop over the transforms)."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def _slices(self, z: Tensor, name: str) -> list[Tensor]:
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {z.dim()} dimensions")
        if z.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal len(transforms) "
                                 f"{len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x: Tensor) -> Tensor:
        return stack([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        pairs = zip(self.transforms, self._slices(x, "x"), self._slices(y, "y"))
        return stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in pairs], self.dim)


identity_transform = ComposeTransform([])  # PyTorch's: the empty composition, y = x
