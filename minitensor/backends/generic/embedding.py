"""Embedding lookups and their gradient (gather and scatter-add, or the sparse COO gradient of
``sparse=True``)."""
from __future__ import annotations

from typing import Any, Callable

from .sparse import SparseCOO

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

    def embedding_sparse_backward(self, gy: Array, indices: Array, num_embeddings: int,
                                  padding_idx: int | None) -> SparseCOO:
        """The (num_embeddings, D) gradient as sparse COO entries, PyTorch's: one per looked-up index, in
        lookup order, uncoalesced (repeated indices stay separate entries, their rows are gy's rows), the
        padding_idx lookups left out."""
        xp = self.xp
        dim = gy.shape[-1]
        flat, rows = indices.reshape(-1).astype(xp.int64, copy=False), gy.reshape(-1, dim)
        if padding_idx is not None:
            keep = flat != padding_idx
            flat, rows = flat[keep], rows[keep]
        return SparseCOO(flat.reshape(1, -1), xp.ascontiguousarray(rows), (num_embeddings, dim), False)
