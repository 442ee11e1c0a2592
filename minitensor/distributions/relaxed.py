"""The relaxed (Concrete / Gumbel-softmax) distributions and the straight-through one-hot categorical
(PyTorch's): ``LogitRelaxedBernoulli`` / ``RelaxedBernoulli``, ``ExpRelaxedCategorical`` /
``RelaxedOneHotCategorical``, ``OneHotCategoricalStraightThrough``. Reparameterised: differentiable samples
of a discrete choice, sharper as ``temperature`` falls."""
from __future__ import annotations

from typing import Any, Sequence

from ..creation import full_like, rand
from ..functional import lgamma
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .discrete import OneHotCategorical, _BinaryProbsOrLogits, _OverCategorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "LogitRelaxedBernoulli", "OneHotCategoricalStraightThrough", "RelaxedBernoulli",
           "RelaxedOneHotCategorical"]


class LogitRelaxedBernoulli(_BinaryProbsOrLogits):
    """The logit of a relaxed Bernoulli: (logit(u) + logit(p)) / t, u ~ U(0, 1); density
    t exp(l - t x) / (1 + exp(l - t x))^2 (l the logits, t the temperature)."""
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        super().__init__(probs, logits, validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new = super().expand(batch_shape, _instance)
        new.temperature = self.temperature  # type: ignore[attr-defined]
        return new

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        logits, value = broadcast_all(self.logits, self._checked(value))
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _RelaxedByTransform(TransformedDistribution):
    """A relaxed distribution made by transforming its base: temperature, logits and probs are the base's."""
    base_dist: Any

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedByTransform):
    """sigmoid of a LogitRelaxedBernoulli: values in (0, 1)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    base_dist: LogitRelaxedBernoulli

    def __init__(self, temperature: Tensor, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)


class ExpRelaxedCategorical(_OverCategorical):
    """log of a relaxed one-hot categorical: log_softmax((logits + g) / t), g standard Gumbel; density (of
    the log-simplex point x) (K - 1)! t^(K-1) exp(sum(l - t x) - K logsumexp(l - t x))."""
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        super().__init__(probs, logits, validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new: Any = type(self).__new__(type(self)) if _instance is None else _instance
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        logits, value = broadcast_all(self.logits, self._checked(value))
        log_scale = lgamma(full_like(self.temperature, float(k))) + self.temperature.log() * (k - 1)
        score = logits - value * self.temperature
        return (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_RelaxedByTransform):
    """exp of an ExpRelaxedCategorical: points of the simplex, near its corners at low temperature."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True
    base_dist: ExpRelaxedCategorical

    def __init__(self, temperature: Tensor, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample is the one-hot sample forward and the probabilities' gradient
    backward: sample + (probs - probs.detach()) (Bengio et al., 2013)."""
    has_rsample = True

    def rsample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
