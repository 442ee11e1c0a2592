"""``minitensor.special``: PyTorch's ``torch.special`` names for the functions minitensor has (the same
functions as ``minitensor.<name>`` where both exist; ``entr``, ``ndtr`` and ``ndtri`` only here)."""
from __future__ import annotations

from .functional.activation import log_softmax, softmax
from .functional.activation import sigmoid as expit
from .functional.math import erf, erfc, erfinv, exp2, expm1, log1p, round
from .functional.reduce import logsumexp
from .functional.special import digamma, entr, i0, logit, ndtr, ndtri, polygamma, sinc, xlogy
from .functional.special import digamma as psi
from .functional.special import lgamma as gammaln

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "log1p",
           "log_softmax", "logit", "logsumexp", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
           "xlogy"]

from .functional.special import igamma as gammainc, igammac as gammaincc, mvlgamma as multigammaln  # noqa: E402

__all__ += ["gammainc", "gammaincc", "multigammaln"]

from .functional.special import erfcx, i0e, i1, i1e, log_ndtr, xlog1py  # noqa: E402

__all__ += ["erfcx", "i0e", "i1", "i1e", "log_ndtr", "xlog1py"]

from .functional.special import (bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_i0,  # noqa: E402
                                 modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
                                 scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0, zeta)

__all__ += ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
            "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
            "spherical_bessel_j0", "zeta"]
