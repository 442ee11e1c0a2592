"""The embedding gradient on CUDA: the kernel of ``kernels/embedding.cu`` (without ``scale_grad_by_freq``)."""
from __future__ import annotations

from typing import Any

from ...deterministic import alert_not_deterministic
from ..generic.embedding import EmbeddingOps
from . import rawmodule
from .rawmodule import RawKernelOps, longs

Array = Any


class CudaEmbeddingOps(RawKernelOps, EmbeddingOps):
    def embedding_backward(self, gy: Array, indices: Array, num_embeddings: int, padding_idx: int | None,
                           scale_grad_by_freq: bool) -> Array:
        if (scale_grad_by_freq or indices.dtype.kind not in "iu" or gy.shape[:-1] != indices.shape
                or not self._fits("embedding_backward", gy)):
            return super().embedding_backward(gy, indices, num_embeddings, padding_idx, scale_grad_by_freq)
        alert_not_deterministic("embedding_backward_cuda")  # atomicAdd: repeated indices add in any order
        xp = self.xp
        dim = gy.shape[-1]
        gw = xp.zeros((num_embeddings, dim), dtype=gy.dtype)
        # the row that gets no gradient (-1: none), a negative padding_idx counting from the end as in NumPy
        no_row = -1 if padding_idx is None else padding_idx % num_embeddings
        rawmodule.launch("embedding_backward", gy.dtype, gy.size,
                         (xp.ascontiguousarray(gy), xp.ascontiguousarray(indices, dtype=xp.int64), gw,
                          *longs(indices.size, dim, num_embeddings, no_row)))
        return gw
