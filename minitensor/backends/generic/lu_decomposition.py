"""LU factorization with partial pivoting over batch dims, as LAPACK's getrf: A = P L U with L unit lower-
triangular, U upper-triangular, both packed in one (..., m, n) array, and the row swaps as 1-based int32
pivots (row j was swapped with row pivots[j] at step j). The CPU runs SciPy's batched LU; CuPy's getrf
(cupyx) takes one matrix at a time, so other array libraries run the elimination here, one step per
column, each step vectorised over the batch."""
from __future__ import annotations

from typing import Any

import numpy as np

Array = Any


class LuOps:
    xp: Any

    def lu_factor(self, a: Array) -> tuple[Array, Array, Array]:
        """(LU (..., m, n), pivots (..., k) int32 1-based, info (...) int32) for a (..., m, n), k = min(m, n).
        info is getrf's: 0, or the 1-based index of the first exact zero on U's diagonal (no error)."""
        if self.xp is np:
            lu, pivots = _scipy_lu(a)
        else:
            lu, pivots = _eliminate(self.xp, a)
        k = min(a.shape[-2:])
        zero = self.xp.diagonal(lu, 0, -2, -1)[..., :k] == 0
        first = self.xp.argmax(zero, axis=-1) + 1 if k else self.xp.zeros(a.shape[:-2], dtype=np.int64)
        info = self.xp.where(zero.any(-1), first, 0) if k else first
        return lu, pivots, info.astype(np.int32)

    def lu_permutation(self, pivots: Array, m: int) -> Array:
        """The row order of pivots (..., k) applied to m rows: (..., m) int64, perm[i] the row of A that is
        row i of L U (so A = P L U with P[perm[i], i] = 1). One step per pivot, over the batch."""
        xp = self.xp
        rows = xp.arange(m)
        perm = xp.broadcast_to(rows, pivots.shape[:-1] + (m,)).copy()
        for j in range(pivots.shape[-1]):
            p = pivots[..., j:j + 1].astype(np.int64) - 1
            at_j, at_p = perm[..., j:j + 1].copy(), xp.take_along_axis(perm, p, -1)
            perm = xp.where(rows == p, at_j, perm)
            perm[..., j:j + 1] = at_p
        return perm


def _scipy_lu(a: Array) -> tuple[Array, Array]:
    """SciPy's LU (batched in its compiled code), packed, with its row order turned into getrf's swaps."""
    import scipy.linalg
    *batch, m, n = a.shape
    k = min(m, n)
    if a.size == 0:
        return a.copy(), np.ones(tuple(batch) + (k,), dtype=np.int32)
    where, low, up = scipy.linalg.lu(a, p_indices=True, check_finite=False)  # a = low[where] @ up
    lu = np.zeros(a.shape, dtype=low.dtype)
    lu[..., :, :k] = np.tril(low, -1)
    lu[..., :k, :] += np.triu(up)
    order = np.argsort(where, axis=-1)  # row i of L U is row order[i] of a
    # replay getrf's swaps: at step j, the row wanted at j sits at pos[order[j]]
    cur = np.broadcast_to(np.arange(m), order.shape).copy()  # the row of a at each position
    pos = cur.copy()  # the position of each row of a
    pivots = np.empty(tuple(batch) + (k,), dtype=np.int64)
    for j in range(k):
        q = np.take_along_axis(pos, order[..., j:j + 1], -1)
        pivots[..., j:j + 1] = q
        rj, rq = cur[..., j:j + 1].copy(), np.take_along_axis(cur, q, -1)
        np.put_along_axis(cur, q, rj, -1)
        cur[..., j:j + 1] = rq
        np.put_along_axis(pos, rj, q, -1)
        np.put_along_axis(pos, rq, np.full_like(q, j), -1)
    return lu.astype(a.dtype, copy=False), (pivots + 1).astype(np.int32)


def _eliminate(xp: Any, a: Array) -> tuple[Array, Array]:
    """getf2's right-looking elimination, one column per step over the whole batch: pick the largest |a_ij|
    at or below the diagonal (the first of equals, as idamax), swap, scale the column (not by a zero
    pivot: LAPACK skips it and reports it in info), update the trailing block."""
    a = a.copy()
    *batch, m, n = a.shape
    k = min(m, n)
    pivots = xp.zeros(tuple(batch) + (k,), dtype=np.int32)
    rows = xp.arange(m)[:, None]
    for j in range(k):
        p = xp.argmax(xp.abs(a[..., j:, j]), axis=-1)[..., None, None] + j  # (..., 1, 1)
        pivots[..., j] = p[..., 0, 0] + 1
        row_j, row_p = a[..., j:j + 1, :].copy(), xp.take_along_axis(a, xp.broadcast_to(p, p.shape[:-1] + (n,)), -2)
        a = xp.where(rows == p, row_j, a)
        a[..., j:j + 1, :] = row_p
        pivot = a[..., j:j + 1, j:j + 1]
        a[..., j + 1:, j:j + 1] /= xp.where(pivot == 0, 1, pivot)
        a[..., j + 1:, j + 1:] -= a[..., j + 1:, j:j + 1] * a[..., j:j + 1, j + 1:]
    return a, pivots
