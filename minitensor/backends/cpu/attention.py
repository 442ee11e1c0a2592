"""The CPU's attention softmax: one Numba pass over each row of the scores, forward and backward, for
float32 (``numba_kernels/attention.py``); other dtypes, other layouts, or no Numba run the generic body."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import kernel_fits, run_kernel
from ..generic.attention import AttentionOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .parallel import over_leading_parts

Array = Any
# scores above this are cut into one part per BLAS thread (the exps dominate): about 0.3 ms of exps on one
# thread, where a part outlasts the ~55 us hand-off to a pool thread several times (activation.py)
PARALLEL_MIN_ELEMENTS = 2 ** 19


def _kernels(first: Array, *others: Array) -> Any:
    """The Numba module for non-empty C-contiguous float32 arrays of one shape, at least 2-D, else None."""
    if first.dtype != np.float32 or first.ndim < 2 or first.size == 0 or not kernel_fits(first, *others):
        return None
    return numba_kernels.load("attention")


def _rows(a: Array) -> Array:
    """(R, L, S), a view of a C-contiguous (..., L, S) array."""
    return a.reshape(-1, *a.shape[-2:])


class CpuAttentionOps(AttentionOps):
    def attention_softmax(self, s: Array, causal: bool) -> Array:
        """As ``AttentionOps.attention_softmax``."""
        k = _kernels(s)
        if k is None:
            return super().attention_softmax(s, causal)
        run_kernel("attention_softmax", False, over_leading_parts, lambda rows: k.softmax_rows(rows, causal),
                   (_rows(s),), PARALLEL_MIN_ELEMENTS)
        return s

    def attention_softmax_backward(self, gp: Array, p: Array) -> Array:
        """As ``AttentionOps.attention_softmax_backward``."""
        k = _kernels(gp, p)
        if k is None:
            return super().attention_softmax_backward(gp, p)
        scratch = np.empty(p.shape[-1], dtype=np.float32)
        run_kernel("attention_softmax_backward", False, k.softmax_rows_backward, _rows(gp), _rows(p), scratch)
        return gp
