"""``TransformedDistribution``: Y = t_n(... t_1(X)) for X ~ ``base_distribution`` (PyTorch's), with

    log p_Y(y) = log p_X(x) - sum_i log|det d t_i / d x_i|,  x = t_1^-1(... t_n^-1(y)),

and ``LogNormal`` = exp of a Normal, built on it as PyTorch builds it."""
from __future__ import annotations

from typing import Any, Sequence

from ..autograd import no_grad
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .continuous import Normal
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, ExpTransform, Transform
from .transforms_more import StickBreakingTransform
from .utils import sum_rightmost

__all__ = ["LogNormal", "LogisticNormal", "TransformedDistribution"]


class TransformedDistribution(Distribution):
    """``base_distribution`` pushed through ``transforms`` (one Transform or a list, applied in order)."""
    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, transforms: Transform | Sequence[Transform],
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, (list, tuple)) and all(isinstance(t, Transform) for t in transforms):
            self.transforms = list(transforms)
        else:
            raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if tuple(base_shape) != tuple(expanded_base_shape):
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        shape = Size(batch_shape) + self.event_shape
        for t in reversed(self.transforms):
            shape = Size(t.inverse_shape(shape))
        base_batch_shape = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)  # type: ignore[attr-defined]
        new.transforms = self.transforms  # type: ignore[attr-defined]
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self) -> constraints.Constraint:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotone_sign(self) -> Any:
        sign: Any = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return 1
        return sign

    def cdf(self, value: Tensor) -> Tensor:
        """The base CDF at the inverse image (1 - it where the composed map decreases)."""
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        sign = self._monotone_sign()
        return value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        sign = self._monotone_sign()
        if not (isinstance(sign, int) and sign == 1):
            value = sign * (value - 0.5) + 0.5
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value


class LogNormal(TransformedDistribution):
    """exp(N(loc, scale^2)): density exp(-(log x - loc)^2 / (2 scale^2)) / (x scale sqrt(2 pi)) on x > 0."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc  # type: ignore[attr-defined]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale  # type: ignore[attr-defined]

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of N(loc, scale^2) over K - 1 dims: points of the K-simplex (PyTorch's)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base: Distribution = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc  # type: ignore[attr-defined]

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale  # type: ignore[attr-defined]
