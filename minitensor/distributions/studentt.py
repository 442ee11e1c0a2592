"""``StudentT``: Student's t with ``df`` degrees of freedom, location and scale (PyTorch's formulas); a draw is
loc + scale z / sqrt(c / df), z ~ N(0, 1) and c ~ Chi2(df), reparameterised in all three parameters."""
from __future__ import annotations

import math
from typing import Sequence

from ..creation import randn
from ..functional import digamma, lgamma, where
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Chi2, _expand_params
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Density Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi) scale) * (1 + y^2 / df)^(-(df+1)/2), y = (x - loc) / scale."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0, scale: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        _expand_params(self, new, ("df", "loc", "scale"), Size(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1, self.loc, math.nan)  # no mean for df <= 1

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """scale^2 df / (df - 2) for df > 2, inf for 1 < df <= 2, nan for df <= 1."""
        var = self.scale.pow(2) * self.df / (self.df - 2)
        var = where(self.df <= 2, math.inf, var)
        return where(self.df <= 1, math.nan, var)

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        z = randn(shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = Chi2(self.df, validate_args=False).rsample(sample_shape)
        return self.loc + self.scale * z * (chi2 / self.df).rsqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
                    - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - log_norm

    def entropy(self) -> Tensor:
        half_df = 0.5 * self.df
        log_beta = lgamma(half_df) + math.lgamma(0.5) - lgamma(half_df + 0.5)
        return (self.scale.log() + (half_df + 0.5) * (digamma(half_df + 0.5) - digamma(half_df))
                + 0.5 * self.df.log() + log_beta)
