"""Special functions on CUDA: the generic bodies, with ``cupyx.scipy.special`` for the gamma and Bessel
functions."""
from __future__ import annotations

from typing import Any

from ..generic.special import SpecialOps


class CudaSpecialOps(SpecialOps):
    def _special_module(self) -> Any:
        import cupyx.scipy.special
        return cupyx.scipy.special
