"""``torch.distributions``: the distributions of VAEs, policies and Bayesian layers, with PyTorch's names,
arguments and formulas (docs/distributions.md). Sampling draws from minitensor's generators."""
from __future__ import annotations

import sys
import types

from . import constraints
from .constraint_registry import biject_to, transform_to
from .counts import Binomial, Geometric, Multinomial, NegativeBinomial, Poisson
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .heavy_tails import Cauchy, GeneralizedPareto, Gumbel, HalfCauchy, HalfNormal, Pareto, Weibull
from .gamma import Beta, Chi2, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .studentt import StudentT
from . import transforms
from .unit_and_ratio import ContinuousBernoulli, FisherSnedecor, InverseGamma, Kumaraswamy
from . import kl_cross, kl_lowrank, kl_more  # noqa: F401  (register the KL pairs of the distributions above)
from .transformed_distribution import LogisticNormal, LogNormal, TransformedDistribution
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .von_mises import VonMises
from .lkj_cholesky import LKJCholesky
from .wishart import Wishart
from .transforms_more import (AbsTransform, CorrCholeskyTransform, CumulativeDistributionTransform,
                              LowerCholeskyTransform, PositiveDefiniteTransform, SoftmaxTransform, SoftplusTransform,
                              StickBreakingTransform, identity_transform)
from .transforms_structural import CatTransform, IndependentTransform, ReshapeTransform, StackTransform
from .mixture import MixtureSameFamily
from .relaxed import OneHotCategoricalStraightThrough, RelaxedBernoulli, RelaxedOneHotCategorical
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, PowerTransform, SigmoidTransform,
                         TanhTransform, Transform)

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "MultivariateNormal",
           "Normal", "OneHotCategorical", "Uniform", "constraints", "kl_divergence", "register_kl"]
__all__ += ["AffineTransform", "Beta", "Chi2", "ComposeTransform", "Dirichlet", "ExpTransform", "Gamma", "LogNormal",
            "PowerTransform", "SigmoidTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution",
            "transforms"]
__all__ += ["GeneralizedPareto"]
__all__ += ["Binomial", "Cauchy", "ContinuousBernoulli", "ExponentialFamily", "FisherSnedecor", "Geometric", "Gumbel",
            "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy", "Multinomial", "NegativeBinomial", "Pareto",
            "Poisson", "Weibull"]
__all__ += ["MixtureSameFamily", "OneHotCategoricalStraightThrough", "RelaxedBernoulli", "RelaxedOneHotCategorical"]
__all__ += ["LKJCholesky", "LogisticNormal", "LowRankMultivariateNormal", "VonMises", "Wishart"]
__all__ += ["AbsTransform", "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
            "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform",
            "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "identity_transform"]
__all__ += ["biject_to", "transform_to"]

# PyTorch's one module per distribution (``from torch.distributions.normal import Normal``), here grouped by
# family in fewer files: the same import paths, as modules registered in sys.modules (Python's import looks a
# dotted name up there before it searches for a file).
_PYTORCH_MODULES = {
    "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"], "categorical": ["Categorical"],
    "cauchy": ["Cauchy"], "chi2": ["Chi2"], "continuous_bernoulli": ["ContinuousBernoulli"],
    "dirichlet": ["Dirichlet"], "exponential": ["Exponential"], "fishersnedecor": ["FisherSnedecor"],
    "generalized_pareto": ["GeneralizedPareto"], "geometric": ["Geometric"], "gumbel": ["Gumbel"],
    "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"], "inverse_gamma": ["InverseGamma"],
    "kumaraswamy": ["Kumaraswamy"], "laplace": ["Laplace"], "log_normal": ["LogNormal"],
    "logistic_normal": ["LogisticNormal"], "mixture_same_family": ["MixtureSameFamily"],
    "multinomial": ["Multinomial"], "negative_binomial": ["NegativeBinomial"], "normal": ["Normal"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"], "pareto": ["Pareto"],
    "poisson": ["Poisson"], "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
    "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"], "studentT": ["StudentT"],
    "uniform": ["Uniform"], "weibull": ["Weibull"],
}


def _register_pytorch_modules() -> None:
    from . import relaxed
    every = {**globals(), **vars(relaxed)}
    for name, members in _PYTORCH_MODULES.items():
        module = types.ModuleType(f"{__name__}.{name}", f"PyTorch's module path torch.distributions.{name}.")
        module.__dict__.update({m: every[m] for m in members}, __all__=members)
        sys.modules[module.__name__] = module
        globals()[name] = module


_register_pytorch_modules()
