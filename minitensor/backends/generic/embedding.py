"""Embedding lookups and their gradient (gather and scatter-add, or the sparse COO gradient of
``sparse=True``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .sparse import SparseCOO

Array = Any


class EmbeddingOps:
    xp: Any
    index_add: Callable[..., Array]  # from ShapeOps: out[index] += src with repeats accumulating
    combine_at: Callable[..., Array]  # from ShapeOps: out[index] = max(out[index], src) ("amax"), repeats all count

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

    # ------------------------------------------------------------------------------------------- bags
    # A bag call's arrays: weight (V, D); indices (N,) int64 in [0, V); offsets (B + 1,) int64 bag bounds,
    # 0 = offsets[0] <= ... <= offsets[B] <= N: bag b is indices[offsets[b]:offsets[b + 1]] (entries past
    # offsets[B] are in no bag); padding_idx entries (if any) are left out of every bag.

    def _bag_entries(self, indices: Array, offsets: Array, padding_idx: int | None) -> tuple[Array, ...]:
        """The kept entries: their positions (K,), rows (K,) and bags (K,) in input order, then each bag's
        count of kept entries (B,) and the position in the kept list of its first one (B,)."""
        xp = self.xp
        n = indices.shape[0]
        keep = xp.arange(n) < offsets[-1]
        if padding_idx is not None:
            keep &= indices != padding_idx
        pos = xp.flatnonzero(keep)
        bag = xp.searchsorted(offsets, pos, side="right") - 1
        before = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(keep, dtype=xp.int64)])  # kept below i
        first = before[offsets[:-1]]
        return pos, indices[pos], bag, before[offsets[1:]] - first, first

    def embedding_bag_forward(self, weight: Array, indices: Array, offsets: Array, mode: str,
                              per_sample_weights: Array | None, padding_idx: int | None) -> tuple[Array, Array | None]:
        """out (B, D) in weight's dtype: each bag's rows summed (times ``per_sample_weights`` (N,) first),
        averaged over its kept entries, or maxed (mode "sum", "mean", "max"); an empty bag gives zeros. For
        "max" also the (B, D) int64 row each maximum came from (-1: empty bag), PyTorch's: a bag's first
        value, replaced only by a greater one (ties go to the first; a NaN stays only where it came first).
        16-bit floats accumulate in float32."""
        xp = self.xp
        bags, dim = offsets.shape[0] - 1, weight.shape[1]
        acc = _accumulator(weight.dtype)
        pos, rows_idx, bag, counts, first = self._bag_entries(indices, offsets, padding_idx)
        rows = xp.take(weight, rows_idx, axis=0).astype(acc, copy=False)  # (K, D)
        if mode == "max":
            out, max_rows = self._bag_max(rows, rows_idx, bag, counts, first, bags)
            return out.astype(weight.dtype, copy=False), max_rows
        if per_sample_weights is not None:
            rows = rows * per_sample_weights[pos].astype(acc, copy=False)[:, None]
        out = xp.zeros((bags, dim), dtype=acc)
        self._add_rows(out, bag, rows)
        if mode == "mean":
            out /= xp.maximum(counts, 1).astype(acc)[:, None]
        return out.astype(weight.dtype, copy=False), None

    def _add_rows(self, out: Array, where: Array, rows: Array) -> None:
        """out[where[k]] += rows[k] (repeats accumulating) for a C-contiguous out (M, D), by one 1-D index_add
        of the (K * D,) flat positions: NumPy's add.at takes its fast path on a 1-D index (4x the 2-D one)."""
        dim = out.shape[1]
        flat = (where[:, None] * dim + self.xp.arange(dim)).reshape(-1)
        self.index_add(out.reshape(-1), flat, rows.reshape(-1))

    def _bag_max(self, rows: Array, rows_idx: Array, bag: Array, counts: Array, first: Array,
                 bags: int) -> tuple[Array, Array]:
        """The bags' maxima (B, D) and arg-max rows of ``embedding_bag_forward`` from the kept rows (K, D)."""
        xp = self.xp
        k, dim = rows.shape
        cols = xp.arange(dim)
        flat = (bag[:, None] * dim + cols).reshape(-1)
        top = xp.full(bags * dim, -xp.inf, dtype=rows.dtype)  # NaN left out here; put back below
        self.combine_at("amax", top, flat, xp.where(xp.isnan(rows), -xp.inf, rows).reshape(-1))
        top = top.reshape(bags, dim)
        full = counts > 0
        lead = rows[xp.where(full, first, 0)] if k else xp.zeros((bags, dim), dtype=rows.dtype)  # first rows
        top = xp.where(full[:, None], xp.where(xp.isnan(lead), lead, top), 0)  # a leading NaN stays
        # The arg-max: each (bag, d)'s first kept entry equal to the maximum (NaN matching NaN), by a scatter
        # min of the entries' places (k where not equal: no entry, row -1); int32 places where they fit
        # (CuPy's minimum.at has no int64)
        target = top[bag]
        hit = (rows == target) | (xp.isnan(rows) & xp.isnan(target))
        place = xp.int32 if k < 2 ** 31 - 1 else xp.int64
        best = xp.full(bags * dim, k, dtype=place)
        self.combine_at("amin", best, flat, xp.where(hit, xp.arange(k, dtype=place)[:, None], k).reshape(-1))
        max_rows = xp.concatenate([rows_idx.astype(xp.int64), xp.full(1, -1, dtype=xp.int64)])[best]
        return top, max_rows.reshape(bags, dim)

    def _bag_scale(self, indices: Array, offsets: Array, counts: Array, mode: str,
                   per_sample_weights: Array | None, scale_grad_by_freq: bool, num_embeddings: int) -> Array | None:
        """(N,) float64: what each entry's gradient row is scaled by, as PyTorch's CPU backward computes it
        in double (1 / its index's count in the input, times its weight, / its bag's count); None: all 1."""
        xp = self.xp
        scale = None
        if scale_grad_by_freq:
            scale = 1.0 / xp.bincount(indices, minlength=num_embeddings)[indices]
        if per_sample_weights is not None:
            w = per_sample_weights.astype(xp.float64)
            scale = w if scale is None else scale * w
        if mode == "mean":
            size = xp.maximum(counts, 1).astype(xp.float64)[self._position_bags(offsets, indices.shape[0])]
            scale = 1.0 / size if scale is None else scale / size
        return scale

    def _position_bags(self, offsets: Array, n: int) -> Array:
        """(n,) int64: the bag of each position (those past the last bag in the last bag: they are left out
        anyway). Needs a bag (B >= 1)."""
        xp = self.xp
        return xp.minimum(xp.searchsorted(offsets, xp.arange(n), side="right") - 1, offsets.shape[0] - 2)

    def embedding_bag_backward(self, gy: Array, indices: Array, offsets: Array, num_embeddings: int, mode: str,
                               per_sample_weights: Array | None, padding_idx: int | None, scale_grad_by_freq: bool,
                               max_rows: Array | None) -> Array:
        """(num_embeddings, D) gradient of ``embedding_bag_forward`` w.r.t. weight, from gy (B, D): "max"
        sends gy[b, d] to row max_rows[b, d]; "sum" / "mean" add each kept entry's bag row of gy, scaled
        (``_bag_scale``), into its row. The padding row gets none."""
        xp = self.xp
        dim = gy.shape[1]
        acc = _accumulator(gy.dtype)
        gw = xp.zeros((num_embeddings, dim), dtype=acc)
        if gy.shape[0] == 0:
            return gw.astype(gy.dtype, copy=False)
        if mode == "max":
            assert max_rows is not None, "embedding_bag_backward: mode 'max' needs the forward's max_rows"
            hit = max_rows >= 0
            self.index_add(gw.reshape(-1), (max_rows * dim + xp.arange(dim))[hit], gy[hit].astype(acc))
            return gw.astype(gy.dtype, copy=False)
        pos, rows_idx, bag, counts, _ = self._bag_entries(indices, offsets, padding_idx)
        rows = gy[bag].astype(acc)
        scale = self._bag_scale(indices, offsets, counts, mode, per_sample_weights, scale_grad_by_freq,
                                num_embeddings)
        if scale is not None:  # rounded to gy's dtype first, as PyTorch's axpy takes it
            rows *= scale[pos].astype(gy.dtype).astype(acc)[:, None]
        self._add_rows(gw, rows_idx, rows)
        return gw.astype(gy.dtype, copy=False)

    def embedding_bag_per_sample_weights_backward(self, gy: Array, weight: Array, indices: Array, offsets: Array,
                                                  padding_idx: int | None) -> Array:
        """(N,) gradient w.r.t. per_sample_weights (mode "sum"): gy[bag of i] . weight[indices[i]], 0 for
        padding entries and entries in no bag."""
        xp = self.xp
        acc = _accumulator(gy.dtype)
        pos, rows_idx, bag, _, _ = self._bag_entries(indices, offsets, padding_idx)
        g = xp.zeros(indices.shape[0], dtype=gy.dtype)
        g[pos] = (gy[bag].astype(acc) * xp.take(weight, rows_idx, axis=0).astype(acc)).sum(axis=1)
        return g


def _accumulator(dtype: Any) -> Any:
    """float32 for the 16-bit floats (as PyTorch's CPU kernels accumulate them), else the dtype itself."""
    return dtype if dtype.itemsize > 2 else np.dtype(np.float32)
