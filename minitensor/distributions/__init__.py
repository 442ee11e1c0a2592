"""``torch.distributions``: the distributions of VAEs, policies and Bayesian layers, with PyTorch's names,
arguments and formulas (docs/distributions.md). Sampling draws from minitensor's generators."""
from __future__ import annotations

from . import constraints
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "MultivariateNormal",
           "Normal", "OneHotCategorical", "Uniform", "constraints", "kl_divergence", "register_kl"]
