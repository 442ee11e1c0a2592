"""The embedding gradient's scatter on the CPU (each row of the incoming gradient added into the row of
the weight's gradient its index names, in input order) and embedding_bag's loops over the bags, forward
and backward (``cpu/embedding.py`` calls them)."""
from __future__ import annotations

import functools

import numba

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False)


@jit
def add_rows(gw, indices, gy):
    """gw[indices[i], :] += gy[i, :] for each i in order: gw (V, D), indices (N,) in [0, V), gy (N, D)."""
    dim = gy.shape[1]
    for i in range(indices.size):
        row = indices[i]
        for j in range(dim):
            gw[row, j] += gy[i, j]


# embedding_bag (``cpu/embedding.py``): bag b is indices[offsets[b]:offsets[b + 1]]; entries equal to
# ``pad`` (-1: none) are left out. Rows are C-contiguous; the loops over d are the vectorised ones.

@jit
def bag_sum(out, counts, weight, indices, offsets, scale, pad):
    """out[b] = sum of scale[i] * weight[indices[i]] over bag b's kept entries (scale empty: 1), in input
    order, accumulated in out's dtype (PyTorch's CPU order); counts[b] = their number. out (B, D) zeros."""
    dim = weight.shape[1]
    weighted = scale.size > 0
    for b in range(out.shape[0]):
        count = 0
        for i in range(offsets[b], offsets[b + 1]):
            row = indices[i]
            if row == pad:
                continue
            count += 1
            if weighted:
                s = scale[i]
                for d in range(dim):
                    out[b, d] += s * weight[row, d]
            else:
                for d in range(dim):
                    out[b, d] += weight[row, d]
        counts[b] = count


@jit
def bag_max(out, rows, weight, indices, offsets, pad):
    """out[b, d] = the bag's first kept weight[indices[i], d], replaced by each greater one after it (PyTorch's
    scan: ties keep the first, a NaN only where it comes first); rows[b, d] = the row it came from. out (B, D)
    zeros and rows -1 for empty bags."""
    dim = weight.shape[1]
    for b in range(out.shape[0]):
        first = True
        for i in range(offsets[b], offsets[b + 1]):
            row = indices[i]
            if row == pad:
                continue
            if first:
                for d in range(dim):
                    out[b, d] = weight[row, d]
                    rows[b, d] = row
                first = False
            else:
                for d in range(dim):  # selects, not branches: the loop vectorises
                    v = weight[row, d]
                    better = v > out[b, d]
                    out[b, d] = v if better else out[b, d]
                    rows[b, d] = row if better else rows[b, d]


@jit
def bag_add_backward(gw, gy, indices, offsets, scale, pad):
    """gw[indices[i]] += scale[i] * gy[b] for each kept entry i of each bag b, in order (scale empty: 1)."""
    dim = gy.shape[1]
    weighted = scale.size > 0
    for b in range(gy.shape[0]):
        for i in range(offsets[b], offsets[b + 1]):
            row = indices[i]
            if row == pad:
                continue
            if weighted:
                s = scale[i]
                for d in range(dim):
                    gw[row, d] += s * gy[b, d]
            else:
                for d in range(dim):
                    gw[row, d] += gy[b, d]


@jit
def bag_max_backward(gw, gy, rows):
    """gw[rows[b, d], d] += gy[b, d] wherever rows[b, d] >= 0."""
    for b in range(gy.shape[0]):
        for d in range(gy.shape[1]):
            row = rows[b, d]
            if row >= 0:
                gw[row, d] += gy[b, d]


@jit
def bag_weights_backward(g, gy, weight, indices, offsets, pad):
    """g[i] = gy[b] . weight[indices[i]] for each kept entry i of each bag b (in float64; g zeros)."""
    dim = gy.shape[1]
    for b in range(gy.shape[0]):
        for i in range(offsets[b], offsets[b + 1]):
            row = indices[i]
            if row == pad:
                continue
            total = 0.0
            for d in range(dim):
                total += gy[b, d] * weight[row, d]
            g[i] = total
