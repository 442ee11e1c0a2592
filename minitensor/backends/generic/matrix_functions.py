"""The matrix exponential exp(A) = sum_k A^k / k! over batch dims. The CPU runs SciPy's ``expm`` (batched,
Al-Mohy and Higham's scaling and squaring); cupyx's ``expm`` takes one matrix at a time, so other array
libraries run Higham's (2005) [13/13] Pade approximant with scaling and squaring here, vectorised over the
batch: each matrix is scaled by its own 2^-s and squared s times (the batch steps max(s) times, a matrix
keeping its value once its own s squarings are done)."""
from __future__ import annotations

from typing import Any

import numpy as np

Array = Any

# The [13/13] Pade coefficients b_0..b_13 and the 1-norm up to which it is exact to double precision.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


class MatrixExpOps:
    xp: Any

    def matrix_exp(self, a: Array) -> Array:
        """exp(a) for a (..., n, n) float32 / float64, in its dtype; all NaN for a matrix with an inf or NaN,
        as PyTorch's."""
        xp = self.xp
        if a.size == 0:
            return a.copy()
        bad = ~xp.isfinite(a).all((-2, -1))[..., None, None]
        a = xp.where(bad, 0, a).astype(a.dtype, copy=False)  # SciPy leaves NaN rows partly finite
        if xp is np:
            import scipy.linalg
            out = scipy.linalg.expm(a).astype(a.dtype, copy=False)
        else:
            out = _pade_expm(xp, a)
        return xp.where(bad, np.nan, out).astype(a.dtype, copy=False)


def _pade_expm(xp: Any, a: Array) -> Array:
    """exp(a) = r(a / 2^s)^(2^s), r the [13/13] Pade approximant, s the least with ||a||_1 / 2^s <= theta13."""
    n = a.shape[-1]
    norm = xp.abs(a).sum(-2).max(-1)  # the 1-norm: the largest column sum
    with np.errstate(divide="ignore"):  # log2(0) of a zero matrix: -inf, no scaling
        s = xp.maximum(xp.ceil(xp.log2(norm / _THETA13)), 0).astype(np.int64)
    x = a * (2.0 ** -s.astype(a.dtype))[..., None, None]
    b = _PADE13
    eye = xp.eye(n, dtype=a.dtype)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    steps = int(s.max())
    for step in range(steps):  # squarings, not batch items: each one over the whole batch
        r = xp.where((step < s)[..., None, None], r @ r, r)
    return r.astype(a.dtype, copy=False)
