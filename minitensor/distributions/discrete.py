"""The discrete distributions: ``Bernoulli``, ``Categorical``, ``OneHotCategorical``. Each takes ``probs`` or
``logits`` (exactly one) and computes the other lazily, as PyTorch."""
from __future__ import annotations

import math
from typing import Sequence

from ..autograd import no_grad
from ..creation import arange, bernoulli, eye, full, multinomial
from ..dtypes import int64
from ..functional import broadcast_tensors
from ..nn.functional import binary_cross_entropy_with_logits, one_hot
from ..size import Size
from ..tensor import Tensor
from ..type_info import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]


def _one_of(probs: object, logits: object) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class _ProbsOrLogits(Distribution):
    """A distribution made from ``probs`` or ``logits``: the one given is in ``__dict__``, the other is a
    ``lazy_property`` of the subclass."""

    @property
    def _param(self) -> Tensor:
        """The parameter the distribution was made from."""
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def _enumerate(self, values: Tensor, expand: bool) -> Tensor:
        """``values`` (n, *event_shape), every value of the support, as (n, *batch_shape, *event_shape) (or
        ones in place of the batch dims without ``expand``)."""
        ones = (1,) * len(self._batch_shape)
        values = values.reshape(values.shape[0], *ones, *self._event_shape)
        return values.expand(-1, *self._batch_shape, *self._event_shape) if expand else values


class _BinaryProbsOrLogits(_ProbsOrLogits):
    """A success probability given as ``probs`` or as ``logits`` (log-odds); the other computed on demand."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        super().__init__(self._param.shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


class Bernoulli(_BinaryProbsOrLogits):
    """1 with probability ``probs`` (= sigmoid(``logits``)), else 0."""
    support = constraints.boolean
    has_enumerate_support = True

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where probs > 1/2, 0 where below, NaN at exactly 1/2."""
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, math.nan)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        value = self._checked(value)  # first: reading logits computes them, and the message's repr shows them
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        return self._enumerate(arange(2, dtype=self._param.dtype, device=self._param.device), expand)


class Categorical(_ProbsOrLogits):
    """Category k in [0, K) with probability probs[..., k]: ``probs`` is normalised over its last dim,
    ``logits`` to log-probabilities (logits - logsumexp(logits)). batch_shape is the parameter's shape less
    its last dim."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    @property
    def _num_events(self) -> int:
        return self._param.shape[-1]

    @property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device)

    variance = mean

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """Indices (int64) drawn by inverse CDF, ``sample_shape.numel()`` draws per batch row at once."""
        sample_shape = Size(sample_shape)
        with no_grad():
            rows = self.probs.reshape(-1, self._num_events)
            drawn = multinomial(rows, sample_shape.numel(), True).T
        return drawn.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        index = self._checked(value).long().unsqueeze(-1)
        index, log_pmf = broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        # A zero probability has logit -inf: clamped to the dtype's lowest, p log p is 0 there, not NaN.
        logits = self.logits.clamp(min=float(finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        return self._enumerate(arange(self._num_events, dtype=int64, device=self._param.device), expand)


class _OverCategorical(_ProbsOrLogits):
    """A distribution of events of K values built on one ``Categorical`` over K classes (``_categorical``):
    its batch shape, parameter, probs and logits are the Categorical's (OneHotCategorical, Multinomial,
    ExpRelaxedCategorical)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _categorical: Categorical

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    @property
    def _param(self) -> Tensor:
        return self._categorical._param

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits


class OneHotCategorical(_OverCategorical):
    """``Categorical`` with one-hot samples: events of shape (K,)."""
    support = constraints.one_hot
    has_enumerate_support = True

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> OneHotCategorical:
        new = super().expand(batch_shape, _instance)
        assert isinstance(new, OneHotCategorical)
        categorical = self._categorical.expand(batch_shape)
        assert isinstance(categorical, Categorical)
        new._categorical = categorical
        return new

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return one_hot(self.probs.argmax(dim=-1), self.probs.shape[-1]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        return self._categorical.log_prob(self._checked(value).argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._event_shape[0]
        return self._enumerate(eye(n, dtype=self._param.dtype, device=self._param.device), expand)
