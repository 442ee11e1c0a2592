"""``MultivariateNormal``: N(loc, Sigma) over vectors, kept as the Cholesky factor L of Sigma = L L^T (given,
or factored once from the covariance or the precision matrix); densities through triangular solves."""
from __future__ import annotations

import math
from typing import Sequence

from ..creation import eye, randn
from ..functional import broadcast_shapes
from ..functional.factorization import cholesky
from ..functional.solve import cholesky_inverse, solve_triangular
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _Located
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def batch_mahalanobis(L: Tensor, x: Tensor) -> Tensor:
    """|L^{-1} x|^2 over the last dim, for L of shape (*b, n, n) and x of shape (*s, *b', n) with b' broadcasting
    to b (PyTorch's scheme): x's extra leading dims become columns of one triangular solve per matrix of L,
    so L is never expanded to the samples' shape."""
    n = x.shape[-1]
    batch_x, batch_dims = x.shape[:-1], L.dim() - 2
    outer = len(batch_x) - batch_dims
    # Split each batch dim of x as (repeat, size in L) where L's dim is 1 or matches, then move L's sizes left.
    shape = tuple(batch_x[:outer])
    for size_l, size_x in zip(L.shape[:-2], batch_x[outer:]):
        shape += (size_x // size_l, size_l)
    x = x.reshape(*shape, n)
    new_dims = outer + 2 * batch_dims
    order = [*range(outer), *range(outer, new_dims, 2), *range(outer + 1, new_dims, 2), new_dims]
    x = x.permute(*order)
    flat_L = L.reshape(-1, n, n)                                   # (b, n, n)
    columns = x.reshape(-1, flat_L.shape[0], n).permute(1, 2, 0)   # (b, n, c)
    m = solve_triangular(flat_L, columns, upper=False).pow(2).sum(-2).T  # (c, b)
    m = m.reshape(x.shape[:-1])
    inverse = list(range(outer))
    for i in range(batch_dims):
        inverse += [outer + i, outer + batch_dims + i]
    return m.permute(*inverse).reshape(batch_x)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    """The lower Cholesky factor of P^{-1}, without inverting P: with the flip J, chol(J P J) gives
    P = U U^T for an upper U, so P^{-1} = (U^{-T})(U^{-1}) and L = U^{-T} is lower triangular."""
    Lf = cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).mT
    return solve_triangular(L_inv, eye(P.shape[-1], dtype=P.dtype, device=P.device), upper=False)


class MultivariateNormal(_Located):
    """N(loc, Sigma) with Sigma given as exactly one of ``covariance_matrix``, ``precision_matrix`` (its
    inverse) or ``scale_tril`` (its lower Cholesky factor L, positive diagonal); loc (*b, n), matrices
    (*b, n, n), broadcast."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given: dict[str, Tensor] = {name: m for name, m in (("scale_tril", scale_tril),
                                                          ("covariance_matrix", covariance_matrix),
                                                          ("precision_matrix", precision_matrix)) if m is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        (name, matrix), = given.items()
        if matrix.dim() < 2:
            what = f"{name} matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = Size(broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        setattr(self, name, matrix.expand(*batch_shape, -1, -1))
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = (matrix if name == "scale_tril" else cholesky(matrix)
                                          if name == "covariance_matrix" else _precision_to_scale_tril(matrix))

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> MultivariateNormal:
        new = super().expand(batch_shape, _instance)
        assert isinstance(new, MultivariateNormal)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _matrix_shape(self) -> Size:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        """log |L| = sum log diag(L) = log det(Sigma) / 2."""
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        diff = self._checked(value) - self.loc
        M = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self) -> Tensor:
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
