"""Dropout on CUDA: one Numba kernel launch each way (``numba_kernels/dropout.py``), for C-contiguous float32
and float64 arrays; anything else takes the generic body. The arrays made here (the output, the mask and
the uniform draw) come from ``self.xp``, so only CuPy allocates, and composed with ``NumpyBackend`` under
``NUMBA_ENABLE_CUDASIM=1`` the same code runs on NumPy arrays. Launches queue on CuPy's current stream
without a host synchronisation (``optim.py`` has the notes)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..compiled import flat, kernel_fits
from ..generic.dropout import DropoutOps
from .numba_kernels import launch
from .numba_kernels.dropout import dropout_backward_kernel, dropout_forward_kernel

Array = Any


def _kept_scale(p: float) -> float:
    """1 / (1 - p), the factor of a kept element (none is kept at p = 1)."""
    return 1 / (1 - p) if p < 1 else 1.0


class CudaDropoutOps(DropoutOps):
    xp: Any
    uniform: Callable[..., Array]  # from RandomOps

    def dropout(self, x: Array, p: float) -> tuple[Array, Array]:
        if not kernel_fits(x):
            return super().dropout(x, p)
        # The same float32 draw as ``bernoulli``, so one seed gives the generic method's mask.
        uniform = self.uniform(x.shape, 0.0, 1.0, np.float32)
        y = self.xp.empty_like(x)
        mask = self.xp.empty(x.shape, dtype=bool)
        t = x.dtype.type
        launch.launch_1d(dropout_forward_kernel, x.size, flat(x), flat(uniform), np.float32(1 - p),
                         t(_kept_scale(p)), t(0), flat(y), flat(mask).view(np.uint8))
        return y, mask

    def dropout_backward(self, gy: Array, mask: Array, p: float) -> Array:
        if not (kernel_fits(gy) and mask.dtype == np.bool_ and mask.shape == gy.shape
                and mask.flags.c_contiguous):
            return super().dropout_backward(gy, mask, p)
        gx = self.xp.empty_like(gy)
        t = gy.dtype.type
        launch.launch_1d(dropout_backward_kernel, gy.size, flat(gy), flat(mask).view(np.uint8),
                         t(_kept_scale(p)), t(0), flat(gx))
        return gx
