"""The CPU's embedding gradient: the rows of gy added into the rows of the weight's gradient their indices
name, in input order, by one Numba loop (``numba_kernels/embedding.py``); without Numba, a stable sort and
one ``np.add.reduceat`` (5x ``np.add.at``'s speed, which scatters element by element). The two sum in
different orders, so they may differ in the last bits. Frequency scaling, indices out of range and non-float
gradients run the generic body (``backends/generic/embedding.py``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import KERNEL_DTYPES, run_kernel
from ..generic.embedding import EmbeddingOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)

Array = Any


class CpuEmbeddingOps(EmbeddingOps):
    def embedding_backward(self, gy: Array, indices: Array, num_embeddings: int, padding_idx: int | None,
                           scale_grad_by_freq: bool) -> Array:
        """As ``EmbeddingOps.embedding_backward``."""
        flat = indices.reshape(-1)
        if scale_grad_by_freq or gy.dtype.kind != "f" or flat.size == 0 or flat.min() < 0 \
                or flat.max() >= num_embeddings:  # (the kernel writes where the indices say: no bounds checks)
            return super().embedding_backward(gy, indices, num_embeddings, padding_idx, scale_grad_by_freq)
        dim = gy.shape[-1]
        rows = gy.reshape(-1, dim)
        gw = np.zeros((num_embeddings, dim), dtype=gy.dtype)
        kernels = numba_kernels.load("embedding") if gy.dtype in KERNEL_DTYPES else None
        if kernels is not None:
            run_kernel("embedding_backward", False, kernels.add_rows, gw, flat, np.ascontiguousarray(rows))
        else:
            order = np.argsort(flat, kind="stable")
            ranked = flat[order]
            starts = np.flatnonzero(np.concatenate([[True], ranked[1:] != ranked[:-1]]))
            gw[ranked[starts]] = np.add.reduceat(rows[order], starts, axis=0)
        if padding_idx is not None:
            gw[padding_idx] = 0
        return gw
