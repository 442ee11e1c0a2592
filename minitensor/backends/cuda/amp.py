"""GradScaler's unscale-and-check on CUDA: ``kernels/amp.cu``, one launch per dtype over all its gradients."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..generic.amp import AmpOps
from . import rawmodule
from .rawmodule import RawKernelOps, acc_dtype, has_instance, longs

Array = Any
TEMPLATE = "amp_unscale_and_check_inf"


class CudaAmpOps(RawKernelOps, AmpOps):
    def amp_unscale_and_check_inf(self, grads: Sequence[Array], inv_scale: float) -> Array:
        """One kernel launch per dtype (float16, float32, float64) over its C-contiguous gradients, found by
        address through a small table copied to the device (no host synchronisation: the table is host
        data); other gradients (bfloat16, strided views) take the generic body."""
        xp = self.xp
        groups: dict[np.dtype, list[Array]] = {}
        rest: list[Array] = []
        for g in grads:
            fits = g.flags.c_contiguous and has_instance(TEMPLATE, g.dtype)
            (groups.setdefault(g.dtype, []) if fits else rest).append(g)
        found = super().amp_unscale_and_check_inf(rest, inv_scale)  # zeros when rest is empty
        for dtype, group in groups.items():
            offsets = np.cumsum([0] + [g.size for g in group], dtype=np.int64)
            addresses = np.array([g.data.ptr for g in group], dtype=np.int64)
            rawmodule.launch(TEMPLATE, dtype, int(offsets[-1]),
                             (xp.asarray(addresses), xp.asarray(offsets), *longs(len(group), offsets[-1]),
                              acc_dtype(dtype).type(inv_scale), found))
        return found
