"""Mixed precision's gradient pass: GradScaler's unscale-and-check over all gradients at once (PyTorch's
``_amp_foreach_non_finite_check_and_unscale_``). Front end: ``functional/amp.py`` (and ``amp.GradScaler``)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

Array = Any


def unscale_dtype(dtype: Any) -> np.dtype:
    """What a gradient of ``dtype`` is unscaled in: float32 for the 16-bit floats (as PyTorch's opmath),
    else the dtype itself."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


class AmpOps:
    xp: Any

    def amp_unscale_and_check_inf(self, grads: Sequence[Array], inv_scale: float) -> Array:
        """Every gradient multiplied in place by ``inv_scale`` (in float32 for float16 / bfloat16, rounded
        once), and found_inf: a 0-d float32 array, 1.0 when any element of any gradient was inf or NaN
        before unscaling, else 0.0. It stays on the device: no host synchronisation (GradScaler reads it
        once per step). The generic body takes a few array passes per gradient; backends fuse them."""
        xp = self.xp
        found = xp.zeros((), dtype=np.float32)
        for g in grads:
            xp.maximum(found, xp.logical_not(xp.isfinite(g)).any(), out=found)  # before the multiply
            compute = unscale_dtype(g.dtype)
            xp.multiply(g, compute.type(inv_scale), out=g, dtype=compute, casting="unsafe")
        return found
