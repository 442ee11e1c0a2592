"""Embedding lookups and their gradient (gather and scatter-add)."""
from __future__ import annotations

from typing import Any, Callable

Array = Any


class EmbeddingOps:
    xp: Any
    index_add: Callable[..., Array]  # from ShapeOps: out[index] += src with repeats accumulating

    def embedding(self, weight: Array, indices: Array) -> Array:
        """weight[indices]: (num_embeddings, D) rows gathered to indices.shape + (D,)."""
        return self.xp.take(weight, indices, axis=0)

    def embedding_backward(self, gy: Array, indices: Array, num_embeddings: int, padding_idx: int | None,
                           scale_grad_by_freq: bool) -> Array:
        """(num_embeddings, D) gradient: each gy row added to its index's row (repeated indices
        accumulate, through ``index_add``), divided by the index's count with ``scale_grad_by_freq``;
        the padding_idx row gets none."""
        xp = self.xp
        dim = gy.shape[-1]
        flat = indices.reshape(-1)
        gw = xp.zeros((num_embeddings, dim), dtype=gy.dtype)
        self.index_add(gw, flat, gy.reshape(-1, dim))
        if scale_grad_by_freq:
            counts = xp.bincount(flat, minlength=num_embeddings)
            gw /= xp.maximum(counts, 1).astype(gw.dtype)[:, None]
        if padding_idx is not None:
            gw[padding_idx] = 0
        return gw
