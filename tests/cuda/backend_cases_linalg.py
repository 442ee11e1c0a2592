"""Parity cases for the matrix methods of the Backend interface (einsum, inverses and solves, determinants,
factorizations), for the sparse COO ones and for the LSTM recurrence (GEMMs per step). Matrices are made well
conditioned with spread spectra, so that float32 results agree to its tolerance and eigen- and singular vectors are
unique up to sign; ``SIGN_FREE`` fixes those signs on each backend's results before they are compared (LAPACK and
cuSOLVER may choose either).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from minitensor.backends.generic.sparse import SparseCOO
from backend_cases import CPU, ONCE, WITH_HALF, Data, On, case

# ------------------------------------------------------------------------------------------- einsum
EINSUM = {"matmul": ("ij,jk->ik", ((3, 4), (4, 5))), "batched": ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))),
          "diagonal": ("ii->i", ((4, 4),)), "trace": ("ii", ((4, 4),)), "dot": ("i,i->", ((6,), (6,))),
          "transpose": ("ij->ji", ((3, 5),)), "outer": ("i,j->ij", ((3,), (4,))),
          "chain": ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))), "ellipsis": ("...ij,...j->...i", ((2, 3, 4), (4,)))}
for _label, (_equation, _shapes) in EINSUM.items():
    case("einsum", _label, lambda d, e=_equation, s=_shapes: (e, [d.n(*shape) for shape in s]), WITH_HALF)


# ------------------------------------------------------------------------------------------ matrices
def symmetric(d: Data, values: list[float]) -> np.ndarray:
    """(2, n, n) symmetric matrices with eigenvalues ``values``."""
    q = np.linalg.qr(d.r.standard_normal((2, len(values), len(values))))[0]
    return ((q * np.array(values)) @ np.swapaxes(q, -1, -2)).astype(d.dt)


def _with_singular_values(d: Data, m: int, values: list[float]) -> np.ndarray:
    """(2, m, n) matrices with exactly the singular values ``values`` (n = len(values) <= m)."""
    u = np.linalg.qr(d.r.standard_normal((2, m, m)))[0][..., :len(values)]
    v = np.linalg.qr(d.r.standard_normal((2, len(values), len(values))))[0]
    return ((u * np.array(values)) @ np.swapaxes(v, -1, -2)).astype(d.dt)


def well_conditioned(d: Data, *shape: int) -> np.ndarray:
    """Normal matrices plus (2 sqrt(n) + 1) I: every eigenvalue at least ~1 from 0 (a normal n x n matrix's
    spectral radius is about sqrt(n))."""
    n = shape[-1]
    return (d.r.standard_normal(shape) + (2 * np.sqrt(n) + 1) * np.eye(n)).astype(d.dt)


case("inv", "", lambda d: (well_conditioned(d, 2, 4, 4),))
case("inv", "view", lambda d: (On(lambda B, a=well_conditioned(d, 3, 3): B.asarray(a).T),))
case("inv_unchecked", "", lambda d: (well_conditioned(d, 2, 4, 4),))
case("solve", "", lambda d: (well_conditioned(d, 2, 4, 4), d.n(2, 4, 3)))
case("solve_triangular", "lower", lambda d: (np.tril(well_conditioned(d, 2, 4, 4)), d.n(2, 4, 3), False))
case("solve_triangular", "upper", lambda d: (np.triu(well_conditioned(d, 2, 4, 4)), d.n(2, 4, 3), True))
case("det", "", lambda d: (well_conditioned(d, 3, 4, 4) * np.array([1, -1, 1], d.dt)[:, None, None],))
case("det", "singular", lambda d: (np.array([[1.0, 2.0], [2.0, 4.0]], d.dt),))
case("slogdet", "", lambda d: (well_conditioned(d, 3, 4, 4) * np.array([1, -1, 1], d.dt)[:, None, None],))
case("slogdet", "large", lambda d: (well_conditioned(d, 2, 40, 40) * 30,))  # det overflows float32; its log does not
case("slogdet", "singular", lambda d: (np.array([[1.0, 2.0], [2.0, 4.0]], d.dt),))
case("cholesky", "", lambda d: (symmetric(d, [0.5, 1.0, 2.0, 4.0]),))


def _one_triangle(d: Data, lower: bool) -> tuple:
    """Symmetric matrices with spread eigenvalues in the triangle eigh reads, garbage in the other one."""
    keep = np.tri(4, dtype=bool) if lower else np.tri(4, dtype=bool).T
    return np.where(keep, symmetric(d, [-3.0, -1.0, 0.5, 2.0]), d.n(2, 4, 4)).astype(d.dt), lower


case("eigh", "lower", lambda d: _one_triangle(d, True))
case("eigh", "upper", lambda d: _one_triangle(d, False))
case("svd", "tall", lambda d: (_with_singular_values(d, 5, [4.0, 2.0, 1.0]), False))
case("svd", "wide", lambda d: (np.swapaxes(_with_singular_values(d, 5, [4.0, 2.0, 1.0]), -1, -2), False))
case("svd", "full-square", lambda d: (_with_singular_values(d, 4, [5.0, 3.0, 1.5, 0.5]), True))
case("svdvals", "", lambda d: (_with_singular_values(d, 5, [4.0, 2.0, 1.0]),))
case("svdvals", "rank-deficient", lambda d: (_with_singular_values(d, 4, [3.0, 1.0, 0.0]),))
case("qr", "reduced", lambda d: (d.n(2, 5, 3), "reduced"))
case("qr", "complete-square", lambda d: (d.n(2, 4, 4), "complete"))
case("qr", "r", lambda d: (d.n(2, 5, 3), "r"))
case("qr", "wide", lambda d: (d.n(3, 5), "reduced"))


def _column_signs(xp: Any, a: Any) -> Any:
    """+-1 per column of ``a`` (..., m, k): the sign of its largest-magnitude entry."""
    at = xp.argmax(xp.abs(a), axis=-2)[..., None, :]
    return xp.sign(xp.take_along_axis(a, at, axis=-2))


def _eigh_signs(xp: Any, result: tuple) -> tuple:
    w, v = result
    return w, v * _column_signs(xp, v)


def _svd_signs(xp: Any, result: tuple) -> tuple:
    u, s, vh = result
    k = s.shape[-1]
    signs = _column_signs(xp, u[..., :k])
    return u[..., :k] * signs, s, vh[..., :k, :] * xp.swapaxes(signs, -1, -2)


def _qr_signs(xp: Any, result: tuple) -> tuple:
    """Q's columns and R's rows times the signs of R's diagonal (a complete Q of a square matrix has no more
    columns than R has rows)."""
    q, r = result
    k = min(r.shape[-2:])
    signs = xp.sign(xp.diagonal(r, 0, -2, -1))[..., :k]
    r = r[..., :k, :] * signs[..., :, None]
    return (q if q.size == 0 else q[..., :k] * signs[..., None, :]), r


SIGN_FREE: dict[str, Callable[[Any, tuple], tuple]] = {"eigh": _eigh_signs, "svd": _svd_signs, "qr": _qr_signs}


# -------------------------------------------------------------------------------------------- sparse
def coo(indices: np.ndarray, values: np.ndarray, shape: tuple[int, ...], coalesced: bool) -> On:
    """A SparseCOO of each backend's arrays."""
    return On(lambda B: SparseCOO(B.asarray(indices), B.asarray(values), shape, coalesced))


def _entries(d: Data, nnz: int, shape: tuple[int, ...], dense: tuple[int, ...] = ()) -> tuple:
    """(indices, values) of ``nnz`` random entries of ``shape``, some repeated (uncoalesced)."""
    indices = np.stack([d.ints(0, n, nnz) for n in shape])
    indices[:, 1] = indices[:, 0]  # a repeat for sure
    return indices, d.n(nnz, *dense)


case("sparse_coalesce", "", lambda d: (coo(*_entries(d, 9, (4, 5)), (4, 5), False),))
case("sparse_coalesce", "hybrid", lambda d: (coo(*_entries(d, 7, (3, 4), (2,)), (3, 4, 2), False),))
case("sparse_coalesce", "already", lambda d: (coo(np.array([[0, 2], [1, 0]]), d.n(2), (3, 2), True),))
case("sparse_to_dense", "repeats", lambda d: (coo(*_entries(d, 9, (4, 5)), (4, 5), False),))
case("sparse_to_dense", "coalesced", lambda d: (coo(np.array([[0, 2, 2], [1, 0, 3]]), d.n(3), (3, 4), True),))
case("sparse_to_dense", "hybrid", lambda d: (coo(*_entries(d, 6, (3,), (4,)), (3, 4), False),))
case("dense_to_sparse", "", lambda d: (np.where(d.bools(4, 5), d.n(4, 5), 0).astype(d.dt), 2))
case("dense_to_sparse", "hybrid", lambda d: (np.where(d.bools(4, 1), d.n(4, 3), 0).astype(d.dt), 1))
case("sparse_values_at", "dense", lambda d: (d.n(4, 5), _entries(d, 6, (4, 5))[0], (4, 5)))
case("sparse_values_at", "sparse", lambda d: (coo(*_entries(d, 9, (4, 5)), (4, 5), False), _entries(d, 6, (4, 5))[0],
                                              (4, 5)))
case("sparse_values_at", "empty", lambda d: (coo(np.zeros((2, 0), np.int64), d.n(0), (4, 5), True),
                                             _entries(d, 3, (4, 5))[0], (4, 5)))
for _transpose in (False, True):
    case("sparse_mm", f"transpose={_transpose}", lambda d, t=_transpose: (
        coo(*_entries(d, 9, (4, 5)), (4, 5), False), d.n(4 if t else 5, 3), t))
case("sparse_mm_values_grad", "", lambda d: (_entries(d, 9, (4, 5))[0], d.n(4, 3), d.n(5, 3)))
case("sparse_sum", "all", lambda d: (coo(*_entries(d, 9, (4, 5)), (4, 5), False), (0, 1)))
case("sparse_sum", "rows", lambda d: (coo(*_entries(d, 9, (4, 5)), (4, 5), False), (1,)))
case("sparse_sum", "3d", lambda d: (coo(*_entries(d, 9, (3, 4, 2)), (3, 4, 2), False), (0, 2)))
case("sparse_sum", "keepdim", lambda d: (coo(*_entries(d, 9, (3, 4, 2)), (3, 4, 2), False), (1,), True))
case("sparse_sum", "hybrid", lambda d: (coo(*_entries(d, 7, (3, 4), (2,)), (3, 4, 2), False), (0, 2)))
case("sparse_sum_rows", "keepdim", lambda d: (_entries(d, 6, (3, 4, 2))[0], (3, 4, 2), (0, 2), True), ONCE)
case("sparse_sum_rows", "kept", lambda d: (_entries(d, 6, (3, 4, 2))[0], (3, 4, 2), (1,), False), ONCE)
for _coalesced in (False, True):
    case("sparse_cat", f"coalesced={_coalesced}", lambda d, c=_coalesced: (
        coo(np.array([[0, 1, 3], [2, 0, 1]]), d.n(3), (4, 3), c), coo(np.array([[1, 3], [0, 2]]), d.n(2), (4, 3), c),
        -0.5))
    case("sparse_add_dense", f"coalesced={_coalesced}", lambda d, c=_coalesced: (
        d.n(4, 3), coo(np.array([[0, 1, 3], [2, 0, 1]]) if c else _entries(d, 6, (4, 3))[0], d.n(3 if c else 6),
                       (4, 3), c), 2.0))
case("sparse_match", "", lambda d: (coo(np.array([[0, 1, 2, 3], [1, 0, 2, 1]]), d.n(4), (4, 3), True),
                                    coo(np.array([[0, 2, 3], [1, 1, 1]]), d.n(3), (4, 3), True)))
case("sparse_permute", "3d", lambda d: (coo(*_entries(d, 6, (3, 4, 2)), (3, 4, 2), False), (2, 0, 1)))
case("sparse_permute", "hybrid", lambda d: (coo(*_entries(d, 5, (3,), (4, 2)), (3, 4, 2), True), (0, 2, 1)))
_A = (np.array([[0, 0, 1, 3], [1, 2, 0, 2]]), (4, 3))  # coalesced (4, 3) and (3, 5) operands of a product
_B = (np.array([[0, 0, 1, 2, 2], [0, 4, 3, 1, 4]]), (3, 5))
case("sparse_spgemm", "", lambda d: (coo(_A[0], d.n(4), _A[1], True), coo(_B[0], d.n(5), _B[1], True)))
case("sparse_mm_pairs", "", lambda d: (coo(_A[0], d.n(4), _A[1], True), coo(_B[0], d.n(5), _B[1], True)), ONCE)
case("sparse_spgemm_grads", "dense", lambda d: (coo(_A[0], d.n(4), _A[1], True), coo(_B[0], d.n(5), _B[1], True),
                                                d.n(4, 5)))
case("sparse_spgemm_grads", "sparse", lambda d: (coo(_A[0], d.n(4), _A[1], True), coo(_B[0], d.n(5), _B[1], True),
                                                 coo(np.array([[0, 1, 3], [0, 3, 4]]), d.n(3), (4, 5), True)))


# ----------------------------------------------------------------------------------------- recurrent
def _lstm_args(d: Data, steps: int = 4, batch: int = 3, hidden: int = 5) -> tuple:
    """gi (L, N, 4H), h0, c0 (N, H), w_hh (4H, H)."""
    return d.n(steps, batch, 4 * hidden), d.n(batch, hidden), d.n(batch, hidden), d.n(4 * hidden, hidden) * 0.5


case("lstm_forward", "", _lstm_args)


def _lstm_backward(d: Data) -> tuple:
    gi, h0, c0, w_hh = _lstm_args(d)
    y, cs, acts = CPU.lstm_forward(gi, h0, c0, w_hh)
    return d.n(*y.shape), h0, c0, w_hh, y, cs, acts


case("lstm_backward", "", _lstm_backward)


# ------------------------------------------------------------------ LU, matrix exponential, _ex, geqrf
case("lu_factor", "", lambda d: (well_conditioned(d, 2, 4, 4),))
case("lu_factor", "wide", lambda d: (d.n(2, 3, 5),))
case("lu_permutation", "", lambda d: (np.array([[2, 3, 3, 4], [1, 2, 4, 4]], np.int32), 4), ONCE)
case("matrix_exp", "", lambda d: (d.n(2, 4, 4) * 0.5,))
case("matrix_exp", "large-norm", lambda d: (d.n(3, 3) * 4,))  # several squarings
case("cholesky_ex", "", lambda d: (symmetric(d, [0.5, 1.0, 2.0, 4.0]),))
case("geqrf", "", lambda d: (d.n(2, 5, 3),))
