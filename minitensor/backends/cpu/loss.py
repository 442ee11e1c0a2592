"""The CPU's cross-entropy over class indices: one Numba pass over each row of float32 (N, C) logits, forward
and backward (``numba_kernels/loss.py``). Class weights, label smoothing, other dtypes or layouts (N, C, d...),
and no Numba run the generic body (``backends/generic/loss.py``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import run_kernel
from ..generic.loss import LossOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)

Array = Any
_F32 = np.dtype(np.float32)


def _kernels(logits: Array, target: Array, weight: Array | None, label_smoothing: float) -> Any:
    """The Numba module for float32 (N, C) logits with C >= 1, (N,) integer targets, no weights or
    smoothing; else None."""
    if logits.dtype != _F32 or logits.ndim != 2 or target.ndim != 1 or target.dtype.kind not in "iu" \
            or weight is not None or label_smoothing or logits.shape[1] == 0:
        return None
    return numba_kernels.load("loss")


class CpuLossOps(LossOps):
    def softmax_cross_entropy(self, logits: Array, target: Array, weight: Array | None, ignore_index: int,
                              label_smoothing: float) -> tuple[Array, Array]:
        """As ``LossOps.softmax_cross_entropy``."""
        k = _kernels(logits, target, weight, label_smoothing)
        if k is None:
            return super().softmax_cross_entropy(logits, target, weight, ignore_index, label_smoothing)
        log_probs = np.empty(logits.shape, dtype=_F32)
        losses = np.empty(logits.shape[:1], dtype=_F32)
        bad = np.empty(1, dtype=np.int64)
        run_kernel("softmax_cross_entropy", False, k.cross_entropy_rows, np.ascontiguousarray(logits), target,
                   ignore_index, log_probs, losses, bad)
        if bad[0] >= 0:  # the caller checks the targets first; this guards the kernel's reads
            raise IndexError(f"cross_entropy: target {int(target[bad[0]])} is out of bounds for "
                             f"{logits.shape[1]} classes")
        return losses, log_probs

    def softmax_cross_entropy_backward(self, g: Array, log_probs: Array, target: Array, weight: Array | None,
                                       ignore_index: int, label_smoothing: float) -> Array:
        """As ``LossOps.softmax_cross_entropy_backward``."""
        k = _kernels(log_probs, target, weight, label_smoothing)
        if k is None or g.dtype != _F32 or not log_probs.flags.c_contiguous:
            return super().softmax_cross_entropy_backward(g, log_probs, target, weight, ignore_index,
                                                          label_smoothing)
        gx = np.empty(log_probs.shape, dtype=_F32)
        run_kernel("softmax_cross_entropy_backward", False, k.cross_entropy_rows_backward, g, log_probs, target,
                   ignore_index, gx)
        return gx
