"""``LKJCholesky``: the LKJ law over Cholesky factors L of D x D correlation matrices (PyTorch's), density
proportional to det(L L^T)^(eta - 1) in the correlation matrix, i.e. prod_i L_ii^(D - i + 2 (eta - 1)) in L;
sampled by PyTorch's onion method (Beta-distributed squared row norms on random directions)."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ..autograd import no_grad
from ..creation import arange, randn
from ..functional import cat, diag_embed, lgamma, where
from ..functional.special import mvlgamma
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """``dim`` >= 2 and ``concentration`` eta > 0 (1: uniform over correlation matrices)."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # The onion method (Lewandowski et al. 2009, 3.2): row k's squared norm off the diagonal is
        # Beta(k / 2, eta + (D - 2) / 2 - (k - 1) / 2) (row 0: a dummy Beta(1/2, .), unused). PyTorch takes
        # Beta(k - 1/2, .), which is the same for k = 1 only (docs/differences.md).
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        half_k = cat([offset.new_full((1,), 0.5), (offset[1:] + 1) * 0.5])
        self._beta = Beta(half_k, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new: Any = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            norm = u.norm(dim=-1, keepdim=True)
            first_row = arange(self.dim, device=y.device).reshape(-1, 1) == 0  # no off-diagonal entries: no 0 / 0
            u_hypersphere = where(first_row, 0.0, u / where(first_row, 1.0, norm))
            w = y.sqrt() * u_hypersphere
            diag = (1 - w.pow(2).sum(-1)).clamp(min=float(finfo(w.dtype).tiny)).sqrt()
            return w + diag_embed(diag)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized - normalize
