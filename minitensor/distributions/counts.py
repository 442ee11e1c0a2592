"""The count distributions: ``Poisson``, ``Binomial``, ``Multinomial``, ``Geometric``, ``NegativeBinomial``
(PyTorch's parameters and formulas; samples are floats in the parameters' dtype, as PyTorch's)."""
from __future__ import annotations

import math
from typing import Sequence

from ..autograd import no_grad
from ..creation import arange, ones_like, rand, tensor, zeros
from ..functional import floor, lgamma, movedim, scatter_add, searchsorted, where, xlogy
from ..functional.random import poisson
from ..nn.functional import binary_cross_entropy_with_logits, logsigmoid
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .discrete import _BinaryProbsOrLogits, _OverCategorical, _one_of
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["Binomial", "Geometric", "Multinomial", "NegativeBinomial", "Poisson"]


class Poisson(ExponentialFamily):
    """P(k) = rate^k exp(-rate) / k!, k = 0, 1, ...; natural parameter log(rate), log-normalizer exp."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return floor(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        with no_grad():
            return poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        rate, value = broadcast_all(self.rate, self._checked(value))
        return xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.rate.log(),)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        return natural_params[0].exp()


class _CountWithProbs(_BinaryProbsOrLogits):
    """``total_count`` broadcast with ``probs`` (success probability) or ``logits`` (its log-odds)."""
    total_count: Tensor

    def __init__(self, total_count: Tensor | float, probs: Tensor | float | None, logits: Tensor | float | None,
                 validate_args: bool | None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            total, self.probs = broadcast_all(total_count, probs)
        else:
            total, self.logits = broadcast_all(total_count, logits)
        self.total_count = total.to(self._param.dtype)
        Distribution.__init__(self, self._param.shape, validate_args=validate_args)  # (its params made above)


class Binomial(_CountWithProbs):
    """Successes among ``total_count`` Bernoulli(``probs``) trials: C(n, k) p^k (1 - p)^(n - k)."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Tensor | int = 1, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return floor((self.total_count + 1) * self.probs).clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """By inverse CDF over a window of k: lo + #{k in [lo, lo + W - 1) : P(lo <= X <= k) < u}, one batched
        ``searchsorted`` per batch row's CDF, lo = max(0, mean - 12 sd - 12), W the widest row's span to
        min(n, mean + 12 sd + 12). The mass outside the window is below 1e-20 (Chernoff; Poisson-like tails when
        p is small), under a uniform's resolution, so this is exact in floating point; memory W x the batch
        plus the sample, W ~ 24 sd + 25 <= n + 1."""
        shape = self._extended_shape(sample_shape)
        nb = len(self._batch_shape)
        with no_grad():
            n, p = self.total_count, self.probs
            mean, sd = n * p, (n * p * (1 - p)).sqrt()
            lo = floor((mean - 12 * sd - 12).clamp(min=0))
            hi = (mean + 12 * sd + 12).clamp(max=n)
            width = int((hi - lo).max()) + 1 if n.numel() else 1
            steps = arange(width, dtype=self._param.dtype, device=self._param.device)
            k = lo.unsqueeze(-1) + steps  # (*batch, W)
            pmf = self._log_prob(k, batch_last=True).exp().masked_fill(k > n.unsqueeze(-1), 0.0)
            n_rows, n_draws = self._batch_shape.numel(), Size(shape[:len(shape) - nb]).numel()
            cdf = pmf.cumsum(-1)[..., :-1].reshape(n_rows, width - 1)  # P(lo <= X <= k) per row
            u = rand(shape, dtype=self._param.dtype, device=self._param.device)
            sample_dims = len(shape) - nb
            rows = u.permute(*range(sample_dims, len(shape)), *range(sample_dims)).reshape(n_rows, n_draws)
            count = searchsorted(cdf.contiguous(), rows.contiguous()).to(u.dtype)  # how many cdf values < u
            count = count.reshape(*self._batch_shape, *shape[:sample_dims])
            count = count.permute(*range(nb, len(shape)), *range(nb)) + lo
            return count.clamp(max=n)  # a cdf that rounds below 1 past n

    def _log_prob(self, value: Tensor, batch_last: bool = False) -> Tensor:
        """PyTorch's form: k logit - n max(logit, 0) - n log1p(exp(-|logit|)) + log C(n, k); max(l, 0) as
        (clamp(l, min=0) + l - clamp(l, max=0)) / 2, whose gradient at l = 0 is 1/2 (that of softplus there).
        ``batch_last``: value is (*batch, m), the parameters broadcast along a new last dim."""
        n, logits = self.total_count, self.logits
        if batch_last:
            n, logits = n.unsqueeze(-1), logits.unsqueeze(-1)
        clamped = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
        normalize = n * clamped + n * (-logits.abs()).exp().log1p() - lgamma(n + 1)
        return value * logits - lgamma(value + 1) - lgamma(n - value + 1) - normalize

    def log_prob(self, value: Tensor) -> Tensor:
        return self._log_prob(self._checked(value))

    def _homogeneous_count(self, what: str) -> int:
        n = int(self.total_count.max())
        if not int(self.total_count.min()) == n:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return n

    def entropy(self) -> Tensor:
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._homogeneous_count("enumerate_support")
        return self._enumerate(arange(1 + n, dtype=self._param.dtype, device=self._param.device), expand)


class Multinomial(_OverCategorical):
    """Counts of ``total_count`` (an int) draws from Categorical(probs / logits): n! / prod x_i! prod p_i^x_i."""

    def __init__(self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        super().__init__(probs, logits, validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Multinomial:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        assert isinstance(new, Multinomial)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)  # type: ignore[assignment]
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """``total_count`` categorical draws per sample, counted per category by one ``scatter_add`` (memory
        total_count x the sample's draws, as PyTorch's)."""
        sample_shape = Size(sample_shape)
        with no_grad():
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            draws = movedim(draws, 0, -1)  # (*sample, *batch, total_count)
            counts = zeros(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
            return scatter_add(counts, -1, draws, ones_like(draws, dtype=self.probs.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        logits, value = broadcast_all(self.logits, self._checked(value))
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0.0)  # 0 log 0 = 0
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self) -> Tensor:
        """n H(categorical) - log n! + sum_i E[log x_i!], x_i ~ Binomial(n, p_i) (over its support)."""
        n = tensor(float(self.total_count), dtype=self.probs.dtype, device=self.probs.device)
        binomial = Binomial(self.total_count, self.probs, validate_args=False)
        support = binomial.enumerate_support(expand=False)[1:]
        weights = lgamma(support + 1)
        term2 = (binomial.log_prob(support).exp() * weights).sum(0).sum(-1)
        return n * self._categorical.entropy() - lgamma(n + 1) + term2


class Geometric(_BinaryProbsOrLogits):
    """Failures before the first success: P(k) = (1 - p)^k p, k = 0, 1, ... (p in (0, 1])."""
    support = constraints.nonnegative_integer

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        super().__init__(probs, logits, validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            value = self.probs
            raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of "
                             f"distribution {self!r} to be positive but found invalid values:\n{value[value <= 0]}")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """floor(log u / log(1 - p)), u in [tiny, 1)."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u.clamp(min=float(finfo(u.dtype).tiny))
            return floor(u.log() / (-self.probs).log1p())

    def log_prob(self, value: Tensor) -> Tensor:
        value, probs = broadcast_all(self._checked(value), self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)  # 0 * log(0) is 0 there, not nan
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


class NegativeBinomial(_CountWithProbs):
    """Successes before ``total_count`` failures, success probability ``probs``:
    Gamma(k + r) / (k! Gamma(r)) p^k (1 - p)^r."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Tensor | float, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return floor((self.total_count - 1) * self.logits.exp()).clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """A Poisson draw of a Gamma(r, exp(-logit)) rate (the gamma-Poisson mixture)."""
        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False).sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)
        r = self.total_count
        unnormalized = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = -lgamma(r + value) + lgamma(1.0 + value) + lgamma(r)
        normalization = normalization.masked_fill(r + value == 0.0, 0.0)  # r = k = 0: probability 1
        return unnormalized - normalization
