"""Softmax cross-entropy on CUDA: the kernels of ``kernels/loss.cu`` on (N, C) logits; (N, C, d1, ...)
logits take the generic body."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..generic.loss import LossOps
from . import rawmodule
from .rawmodule import WARP_SIZE, RawKernelOps, acc_dtype, longs

Array = Any


class CudaLossOps(RawKernelOps, LossOps):
    def _class_rows_fit(self, template: str, scores: Array, target: Array, *arrays: Array) -> bool:
        """(N, C) scores, (N,) integer targets and float arrays of the scores' dtype."""
        return (scores.ndim == 2 and target.shape == scores.shape[:1] and target.dtype.kind in "iu"
                and self._fits(template, scores, *arrays))

    def _class_weight_args(self, weight: Array | None, like: Array) -> tuple[Array, np.int64]:
        """(weight as a contiguous array of like's dtype, has_weight); without weights ``like`` stands in
        as the pointer, which the kernel never reads."""
        if weight is None:
            return like, np.int64(0)
        return self.xp.ascontiguousarray(weight, dtype=like.dtype), np.int64(1)

    def softmax_cross_entropy(self, logits: Array, target: Array, weight: Array | None,
                              ignore_index: int, label_smoothing: float) -> tuple[Array, Array]:
        if not self._class_rows_fit("softmax_cross_entropy_forward", logits, target):
            return super().softmax_cross_entropy(logits, target, weight, ignore_index, label_smoothing)
        xp = self.xp
        logits = xp.ascontiguousarray(logits)
        rows, cols = logits.shape
        w, has_weight = self._class_weight_args(weight, logits)
        losses = xp.empty(rows, dtype=logits.dtype)
        log_probs = xp.empty((rows, cols), dtype=logits.dtype)
        rawmodule.launch("softmax_cross_entropy_forward", logits.dtype, rows,
                         (logits, xp.ascontiguousarray(target, dtype=xp.int64), w, losses, log_probs,
                          *longs(rows, cols), has_weight, np.int64(ignore_index),
                          acc_dtype(logits.dtype).type(label_smoothing)),
                         threads_per_item=WARP_SIZE)
        return losses, log_probs

    def softmax_cross_entropy_backward(self, g: Array, log_probs: Array, target: Array,
                                       weight: Array | None, ignore_index: int,
                                       label_smoothing: float) -> Array:
        if not (self._class_rows_fit("softmax_cross_entropy_backward", log_probs, target, g)
                and g.shape == target.shape):
            return super().softmax_cross_entropy_backward(g, log_probs, target, weight, ignore_index,
                                                          label_smoothing)
        xp = self.xp
        log_probs = xp.ascontiguousarray(log_probs)
        rows, cols = log_probs.shape
        w, has_weight = self._class_weight_args(weight, log_probs)
        # sum(weight) as a one-element device array (no host sync); read only with weights and smoothing
        weight_sum = w.sum(keepdims=True) if has_weight and label_smoothing else log_probs
        gx = xp.empty((rows, cols), dtype=log_probs.dtype)
        rawmodule.launch("softmax_cross_entropy_backward", log_probs.dtype, gx.size,
                         (xp.ascontiguousarray(g), log_probs, xp.ascontiguousarray(target, dtype=xp.int64), w,
                          weight_sum, gx, *longs(rows, cols), has_weight, np.int64(ignore_index),
                          acc_dtype(log_probs.dtype).type(label_smoothing)))
        return gx
