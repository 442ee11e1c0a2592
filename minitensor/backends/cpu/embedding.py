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

    # embedding_bag: the Numba loops over the bags (numba_kernels/embedding.py) for float32 and float64; the
    # generic body (vectorised, with (K, D) intermediates) for the other dtypes, without Numba, and for
    # arrays the loops would read out of bounds with (they have no bounds checks).
    def _bag_kernels(self, dtype: Any, indices: Array, offsets: Array, num_embeddings: int) -> Any:
        if dtype not in KERNEL_DTYPES or offsets.shape[0] < 2:
            return None
        kernels = numba_kernels.load("embedding")
        if kernels is None or offsets[0] < 0 or offsets[-1] > indices.shape[0] or (np.diff(offsets) < 0).any():
            return None
        if indices.size and (indices.min() < 0 or indices.max() >= num_embeddings):
            return None
        return kernels

    def _add_rows(self, out: Array, where: Array, rows: Array) -> None:
        """As ``EmbeddingOps._add_rows`` (the generic body's, where the loops do not run): rows already in
        runs (a forward's bags) with runs of 8 on average by one ``np.add.reduceat`` over them (5x add.at's
        speed; reduceat pays per run, so short runs, a backward's scattered rows, keep the flat add.at)."""
        k = where.shape[0]
        if k > 1 and bool((where[1:] >= where[:-1]).all()):
            starts = np.flatnonzero(np.concatenate([[True], where[1:] != where[:-1]]))
            if 8 * starts.size <= k:
                out[where[starts]] += np.add.reduceat(rows, starts, axis=0)
                return
        super()._add_rows(out, where, rows)

    def _position_bags(self, offsets: Array, n: int) -> Array:
        """As ``EmbeddingOps._position_bags``: one repeat of each bag's number (a third of searchsorted's time)."""
        bags = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        return np.concatenate([bags, np.full(n - bags.size, offsets.shape[0] - 2)]) if bags.size < n else bags

    def embedding_bag_forward(self, weight: Array, indices: Array, offsets: Array, mode: str,
                              per_sample_weights: Array | None, padding_idx: int | None) -> tuple[Array, Array | None]:
        """As ``EmbeddingOps.embedding_bag_forward``."""
        kernels = self._bag_kernels(weight.dtype, indices, offsets, weight.shape[0])
        if kernels is None:
            return super().embedding_bag_forward(weight, indices, offsets, mode, per_sample_weights, padding_idx)
        dt = weight.dtype
        out = np.zeros((offsets.shape[0] - 1, weight.shape[1]), dtype=dt)
        w, idx, bounds = np.ascontiguousarray(weight), _longs(indices), _longs(offsets)
        pad = -1 if padding_idx is None else padding_idx
        if mode == "max":
            rows = np.full(out.shape, -1, dtype=np.int64)
            run_kernel("embedding_bag_forward", False, kernels.bag_max, out, rows, w, idx, bounds, pad)
            return out, rows
        scale = np.zeros(0, dt) if per_sample_weights is None else np.ascontiguousarray(per_sample_weights, dtype=dt)
        counts = np.zeros(out.shape[0], dtype=np.int64)
        run_kernel("embedding_bag_forward", False, kernels.bag_sum, out, counts, w, idx, bounds, scale, pad)
        if mode == "mean":  # divided in out's dtype, as PyTorch's output.div_(bag_size)
            out /= np.maximum(counts, 1).astype(dt)[:, None]
        return out, None

    def embedding_bag_backward(self, gy: Array, indices: Array, offsets: Array, num_embeddings: int, mode: str,
                               per_sample_weights: Array | None, padding_idx: int | None, scale_grad_by_freq: bool,
                               max_rows: Array | None) -> Array:
        """As ``EmbeddingOps.embedding_bag_backward``."""
        kernels = self._bag_kernels(gy.dtype, indices, offsets, num_embeddings)
        if kernels is None:
            return super().embedding_bag_backward(gy, indices, offsets, num_embeddings, mode, per_sample_weights,
                                                  padding_idx, scale_grad_by_freq, max_rows)
        gw = np.zeros((num_embeddings, gy.shape[1]), dtype=gy.dtype)
        g = np.ascontiguousarray(gy)  # (a sum's gradient arrives broadcast: stride 0)
        if mode == "max":
            run_kernel("embedding_bag_backward", False, kernels.bag_max_backward, gw, g, max_rows)
            return gw
        scale = None
        if mode == "mean" or per_sample_weights is not None or scale_grad_by_freq:
            counts = np.zeros(offsets.shape[0] - 1, dtype=np.int64)  # the mean's divisors: kept entries per bag
            if mode == "mean":
                keep = indices != (-1 if padding_idx is None else padding_idx)
                before = np.concatenate([[0], np.cumsum(keep)])
                counts = before[offsets[1:]] - before[offsets[:-1]]
            scale = self._bag_scale(indices, offsets, counts, mode, per_sample_weights, scale_grad_by_freq,
                                    num_embeddings)
        scale = np.zeros(0, gy.dtype) if scale is None else scale.astype(gy.dtype)  # rounded as PyTorch's axpy
        pad = -1 if padding_idx is None else padding_idx
        run_kernel("embedding_bag_backward", False, kernels.bag_add_backward, gw, g, _longs(indices),
                   _longs(offsets), scale, pad)
        return gw

    def embedding_bag_per_sample_weights_backward(self, gy: Array, weight: Array, indices: Array, offsets: Array,
                                                  padding_idx: int | None) -> Array:
        """As ``EmbeddingOps.embedding_bag_per_sample_weights_backward``."""
        kernels = self._bag_kernels(gy.dtype, indices, offsets, weight.shape[0])
        if kernels is None or weight.dtype != gy.dtype:
            return super().embedding_bag_per_sample_weights_backward(gy, weight, indices, offsets, padding_idx)
        g = np.zeros(indices.shape[0], dtype=gy.dtype)
        run_kernel("embedding_bag_per_sample_weights_backward", False, kernels.bag_weights_backward, g,
                   np.ascontiguousarray(gy), np.ascontiguousarray(weight), _longs(indices), _longs(offsets),
                   -1 if padding_idx is None else padding_idx)
        return g


def _longs(a: Array) -> Array:
    return np.ascontiguousarray(a, dtype=np.int64)
