"""Dropout masks and embedding lookups with their gradients (random and scatter work)."""
from __future__ import annotations

from typing import Any

Array = Any


class DropoutOps:
    xp: Any

    def dropout(self, x: Array, p: float) -> tuple[Array, Array]:
        """-> (y, mask): each element kept with probability 1 - p (``mask`` True, from the backend's
        generator) and scaled by 1 / (1 - p) so that E[y] = x; p = 1 drops everything."""
        mask = self.bernoulli(1 - p, x.shape)
        y = x * mask
        if p < 1:
            y *= 1 / (1 - p)
        return y, mask

    def dropout_backward(self, gy: Array, mask: Array, p: float) -> Array:
        """gy * mask / (1 - p): the same scaling as forward, through the saved boolean mask."""
        gx = gy * mask
        if p < 1:
            gx *= 1 / (1 - p)
        return gx

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
