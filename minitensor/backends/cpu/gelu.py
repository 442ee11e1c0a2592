"""The CPU's exact GELU and its backward for float32 C-contiguous arrays: one Numba pass each
(``numba_kernels/gelu.py``; the backward adds NumPy's exp pass). The tanh form, other dtypes and layouts, or
no Numba run the generic body (``backends/generic/activation.py``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import flat, kernel_fits, run_kernel
from ..generic.activation import ActivationOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)

Array = Any
_F32 = np.dtype(np.float32)


def _kernels(approximate: str, *arrays: Array) -> Any:
    """The Numba module when the exact form runs on float32 C-contiguous arrays of one shape, else None."""
    if approximate != "none" or arrays[0].dtype != _F32 or not kernel_fits(*arrays):
        return None
    return numba_kernels.load("gelu")


class CpuGeluOps(ActivationOps):
    def gelu(self, x: Array, approximate: str) -> Array:
        """As ``ActivationOps.gelu``."""
        k = _kernels(approximate, x)
        if k is None:
            return super().gelu(x, approximate)
        y = np.empty_like(x)
        run_kernel("gelu", False, k.gelu, flat(x), flat(y))
        return y

    def gelu_backward(self, gy: Array, x: Array, approximate: str) -> Array:
        """As ``ActivationOps.gelu_backward``."""
        k = _kernels(approximate, gy, x)
        if k is None:
            return super().gelu_backward(gy, x, approximate)
        e = np.multiply(x, np.float32(-0.5))
        e *= x
        np.exp(e, out=e)
        gx = np.empty_like(x)
        run_kernel("gelu_backward", False, k.gelu_backward, flat(gy), flat(x), flat(e), flat(gx))
        return gx
