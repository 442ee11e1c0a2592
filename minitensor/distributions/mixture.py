"""``MixtureSameFamily`` (PyTorch's): a Categorical over the last batch dim of one component distribution,
p(x) = sum_k pi_k p_k(x), scored with logsumexp."""
from __future__ import annotations

from typing import Any, Sequence

from ..autograd import no_grad
from ..size import Size
from ..tensor import Tensor
from . import constraints
from .discrete import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """``mixture_distribution`` (a Categorical over K) picks one of the K components along the last batch dim
    of ``component_distribution``: batch shape that of the components less its last dim."""
    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        self._mixture_distribution, self._component_distribution = mixture_distribution, component_distribution
        mdbs, cdbs = mixture_distribution.batch_shape, component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km, kc = mixture_distribution.logits.shape[-1], component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Sequence[int], _instance: Distribution | None = None) -> Distribution:
        new: Any = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self) -> constraints.Constraint:
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Tensor) -> Tensor:
        """x with a component dim before its event dims."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        """The mixture's (..., K) with ones for the batch dims it lacks and for the event dims."""
        pad = 0 if len(self.mixture_distribution.batch_shape) == 1 else (
            len(self.batch_shape) - len(self.mixture_distribution.batch_shape))
        return x.reshape(*x.shape[:-1], *(1,) * pad, x.shape[-1], *(1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        """Law of total variance: E[Var(X | k)] + Var(E[X | k])."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        log_prob_x = self.component_distribution.log_prob(self._pad(self._checked(x)))
        log_mix_prob = self.mixture_distribution.logits.log_softmax(dim=-1)
        return (log_prob_x + log_mix_prob).logsumexp(dim=-1)

    def sample(self, sample_shape: Sequence[int] = Size()) -> Tensor:
        """One draw of every component and of the mixture index, then a gather along the component dim."""
        sample_shape = Size(sample_shape)
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = self.event_shape
            index = self.mixture_distribution.sample(sample_shape)
            mix_batch = self.mixture_distribution.batch_shape
            missing = (1,) * (len(self.batch_shape) - len(mix_batch))  # a mixture shared by leading batch dims
            index = index.reshape(*sample_shape, *missing, *mix_batch).expand(*sample_shape, *self.batch_shape)
            comp = self.component_distribution.sample(sample_shape)
            index = index.reshape(*index.shape, 1, *(1,) * len(es)).expand(*index.shape, 1, *es)
            return comp.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
