"""``minitensor.special``: PyTorch's ``torch.special`` names for the functions minitensor has (the same
functions as ``minitensor.<name>`` where both exist; ``entr``, ``ndtr`` and ``ndtri`` only here)."""
from __future__ import annotations

from .functional.activation import log_softmax, softmax
from .functional.activation import sigmoid as expit
from .functional.math import erf, erfc, erfinv, exp2, expm1, log1p, round
from .functional.reduce import logsumexp
from .functional.special import entr, ndtr, ndtri

# xlogy and logit: imported here from the functional families once they exist (another branch adds them).

__all__ = ["entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "log1p", "log_softmax", "logsumexp", "ndtr",
           "ndtri", "round", "softmax"]
