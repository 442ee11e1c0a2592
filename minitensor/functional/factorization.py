"""Matrix factorizations as ``torch.linalg``: cholesky, eigh / eigvalsh, svd / svdvals, qr, and pinv on svd.

Their gradients are PyTorch's (derivatives.yaml, real inputs). A Function has one differentiable output, so
the factorizations with several (eigh, svd, qr) return them packed along one last axis, (*, size1 +
size2 + ...), which the front end splits back into views: an unused factor's gradient arrives as zeros,
which these formulas treat as PyTorch treats an undefined one. As in PyTorch, the svd and eigh gradients
are infinite or nan where singular values or eigenvalues repeat (the factors are not unique there).
"""
from __future__ import annotations

import math
from itertools import accumulate
from typing import Any, Sequence

import numpy as np

from .. import return_types as rt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from .indexing import where
from .reduce import amax
from .solve import check_matrices, mT, rows
from ..amp.autocast_mode import autocast, cast_early
from ..amp.policy import Linalg

__all__ = ["cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv", "pinverse", "matrix_rank", "torch_svd",
           "torch_qr", "lstsq"]


def _device_type(x: Any) -> str:
    """x's device type, for an autocast region around a composed op ("cpu" for a non-tensor: checked later)."""
    return x.device.type if isinstance(x, Tensor) else "cpu"


def _pack(B: Backend, ctx: Any, *outs: Any) -> Any:
    """The factors (each with the input's batch dims ``ctx.nb``) flattened and joined on one last axis."""
    ctx.out_shapes = [o.shape for o in outs]
    return B.concatenate([B.reshape(o, o.shape[:ctx.nb] + (math.prod(o.shape[ctx.nb:]),)) for o in outs], ctx.nb)


def _unpack_grads(B: Backend, ctx: Any, g: Any) -> list[Any]:
    sizes = [math.prod(s[ctx.nb:]) for s in ctx.out_shapes]
    parts = B.split(g, list(accumulate(sizes))[:-1], ctx.nb)
    return [B.reshape(p, s) for p, s in zip(parts, ctx.out_shapes)]


def _unpack(packed: Tensor, shapes: Sequence[tuple[int, ...]]) -> list[Tensor]:
    parts = packed.split([math.prod(s[packed.ndim - 1:]) for s in shapes], -1)
    return [p.reshape(s) for p, s in zip(parts, shapes)]


def _eye(B: Backend, n: int, like: Any) -> Any:
    return B.eye(n, n, like.dtype)


class Cholesky(ArrayFunction):
    """gA = sym(L^-T Phi(L^T gL) L^-1), Phi: the lower triangle with its diagonal halved."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, upper: bool) -> Any:
        L = B.cholesky(a)
        ctx.upper = upper
        ctx.save_for_backward(L)
        return mT(B, L) if upper else L

    @staticmethod
    def backward(ctx: Any, B: Backend, gL: Any) -> Any:
        L, = ctx.saved_arrays
        if ctx.upper:
            gL = mT(B, gL)
        eye = _eye(B, L.shape[-1], L)
        phi = B.tril(B.matmul(mT(B, L), gL), 0) * (1 - 0.5 * eye)
        with np.errstate(all="ignore"):  # cholesky_ex's failed factor: inf / NaN, no error (as PyTorch's)
            L_inv = B.solve_triangular(L, B.broadcast_to(eye, L.shape), False)
            g = B.matmul(B.matmul(mT(B, L_inv), phi), L_inv)
        return 0.5 * (g + mT(B, g)), None


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """L (lower-triangular) with A = L L^T for A (*, n, n) symmetric positive-definite; ``upper``: L^T."""
    A, = cast_early(Linalg, A)
    check_matrices("cholesky", A)
    return Cholesky.apply(A, upper)


def _eigh_grad(B: Backend, w: Any, v: Any, gw: Any, gv: Any | None) -> Any:
    """gA = V (diag(gw) + skew(V^T gV) / E) V^T with E_ij = w_j - w_i off the diagonal."""
    inner = rows(B, gw) * _eye(B, w.shape[-1], w)
    if gv is not None:
        vg = B.matmul(mT(B, v), gv)
        e = rows(B, w) - B.expand_dims(w, (-1,)) + _eye(B, w.shape[-1], w)
        inner = inner + 0.5 * (vg - mT(B, vg)) / e
    return B.matmul(B.matmul(v, inner), mT(B, v))


class Eigh(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, lower: bool) -> Any:
        w, v = B.eigh(a, lower)
        ctx.nb = a.ndim - 2
        ctx.save_for_backward(w, v)
        return _pack(B, ctx, w, v)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        w, v = ctx.saved_arrays
        gw, gv = _unpack_grads(B, ctx, g)
        return _eigh_grad(B, w, v, gw, gv), None


class Eigvalsh(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, lower: bool) -> Any:
        w, v = B.eigh(a, lower)
        ctx.save_for_backward(w, v)
        return w

    @staticmethod
    def backward(ctx: Any, B: Backend, gw: Any) -> Any:
        w, v = ctx.saved_arrays
        return _eigh_grad(B, w, v, gw, None), None


def _uplo(name: str, UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"linalg.{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "L"


def eigh(A: Tensor, UPLO: str = "L") -> rt.linalg_eigh:
    """(w ascending (*, n), V (*, n, n)) with A = V diag(w) V^T, reading A's ``UPLO`` triangle only."""
    A, = cast_early(Linalg, A)
    check_matrices("eigh", A)
    w, v = _unpack(Eigh.apply(A, _uplo("eigh", UPLO)), [tuple(A.shape[:-1]), tuple(A.shape)])
    return rt.linalg_eigh((w, v))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric A (*, n, n), ascending."""
    A, = cast_early(Linalg, A)
    check_matrices("eigvalsh", A)
    return Eigvalsh.apply(A, _uplo("eigvalsh", UPLO))


def _svd_grad(B: Backend, u: Any, s: Any, vh: Any, gu: Any | None, gs: Any, gvh: Any | None) -> Any:
    """PyTorch's svd_backward for the reduced factors: u (*, m, k), s (*, k), vh (*, k, n)."""
    m, n = u.shape[-2], vh.shape[-1]
    if gu is None:
        return B.matmul(u * rows(B, gs), vh)
    s2 = s * s
    eye = _eye(B, s.shape[-1], s)
    e = rows(B, s2) - B.expand_dims(s2, (-1,)) + eye
    uhgu = B.matmul(mT(B, u), gu)
    vhgv = B.matmul(vh, mT(B, gvh))
    ga = ((uhgu - mT(B, uhgu)) * rows(B, s) + B.expand_dims(s, (-1,)) * (vhgv - mT(B, vhgv))) / e
    ga = ga + rows(B, gs) * eye
    if m > n:  # the part of gU outside U's span: (I - U U^T) gU S^-1
        gus = gu / rows(B, s)
        ga = B.matmul(B.matmul(u, ga) + gus - B.matmul(u, B.matmul(mT(B, u), gus)), vh)
    elif m < n:
        sgvh = gvh / B.expand_dims(s, (-1,))
        ga = B.matmul(u, B.matmul(ga, vh) + sgvh - B.matmul(B.matmul(sgvh, mT(B, vh)), vh))
    else:
        ga = B.matmul(u, B.matmul(ga, vh))
    return ga


class Svd(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, full_matrices: bool) -> Any:
        u, s, vh = B.svd(a, full_matrices)
        ctx.nb = a.ndim - 2
        k = s.shape[-1]  # the gradient uses the first k columns of U and rows of Vh, as PyTorch's
        ctx.save_for_backward(u[..., :k], s, vh[..., :k, :])
        return _pack(B, ctx, u, s, vh)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        u, s, vh = ctx.saved_arrays
        k = s.shape[-1]
        gu, gs, gvh = _unpack_grads(B, ctx, g)
        return _svd_grad(B, u, s, vh, gu[..., :k], gs, gvh[..., :k, :]), None


class Svdvals(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        if not ctx.needs_input_grad[0]:
            return B.svdvals(a)
        u, s, vh = B.svd(a, False)
        ctx.save_for_backward(u, s, vh)
        return s

    @staticmethod
    def backward(ctx: Any, B: Backend, gs: Any) -> Any:
        u, s, vh = ctx.saved_arrays
        return _svd_grad(B, u, s, vh, None, gs, None)


def svd(A: Tensor, full_matrices: bool = True) -> rt.linalg_svd:
    """A = U diag(S) Vh for A (*, m, n): S (*, k) descending, k = min(m, n); U (*, m, m) and Vh (*, n, n)
    with ``full_matrices``, else U (*, m, k) and Vh (*, k, n)."""
    A, = cast_early(Linalg, A)
    check_matrices("svd", A, square=False)
    *batch, m, n = A.shape
    k = min(m, n)
    shapes = [(*batch, m, m if full_matrices else k), (*batch, k), (*batch, n if full_matrices else k, n)]
    return rt.linalg_svd(_unpack(Svd.apply(A, full_matrices), shapes))


def svdvals(A: Tensor) -> Tensor:
    """The singular values of A (*, m, n), descending (*, min(m, n))."""
    A, = cast_early(Linalg, A)
    check_matrices("svdvals", A, square=False)
    return Svdvals.apply(A)


def _right_solve(B: Backend, x: Any, r: Any) -> Any:
    """x R^-T (R upper-triangular, square)."""
    return mT(B, B.solve(r, mT(B, x)))


def _qr_grad_tall(B: Backend, q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """The QR gradient for m >= n (reduced factors): Q (gR + tril(skew(Q^T gQ) + skew(R gR^T)) R^-T) +
    (gQ - Q Q^T gQ) R^-T."""
    qdq = B.matmul(mT(B, q), gq)
    rdr = B.matmul(r, mT(B, gr))
    low = B.tril(qdq - mT(B, qdq) + rdr - mT(B, rdr), 0)
    return B.matmul(q, gr + _right_solve(B, low, r)) + _right_solve(B, gq - B.matmul(q, qdq), r)


class Qr(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, mode: str) -> Any:
        q, r = B.qr(a, mode)
        if mode == "r":  # Q is not computed: an empty factor with the batch dims, so it packs
            q = B.reshape(q, a.shape[:-2] + (0,))
        ctx.nb, ctx.mode = a.ndim - 2, mode
        ctx.save_for_backward(a, q, r)
        return _pack(B, ctx, q, r)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        a, q, r = ctx.saved_arrays
        m, n = a.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                               "through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                               "nrows > ncols.")
        gq, gr = _unpack_grads(B, ctx, g)
        if m >= n:
            return _qr_grad_tall(B, q, r, gq, gr), None
        # m < n: A = Q [X Y] with X (m, m): X's gradient is the square case, Y's is Q gR_Y
        gy = B.matmul(q, gr[..., m:])
        gx = _qr_grad_tall(B, q, r[..., :m], gq + B.matmul(a[..., m:], mT(B, gr[..., m:])), gr[..., :m])
        return B.concatenate([gx, gy], -1), None


def qr(A: Tensor, mode: str = "reduced") -> rt.linalg_qr:
    """A = Q R for A (*, m, n), Q orthonormal columns, R upper-triangular; ``mode`` "reduced" (Q (*, m, k),
    R (*, k, n), k = min(m, n)), "complete" (Q (*, m, m), R (*, m, n)) or "r" (Q empty, R (*, k, n))."""
    A, = cast_early(Linalg, A)
    check_matrices("qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    *batch, m, n = A.shape
    k = m if mode == "complete" else min(m, n)
    shapes = [(*batch, 0) if mode == "r" else (*batch, m, k), (*batch, k, n)]
    q, r = _unpack(Qr.apply(A, mode), shapes)
    return rt.linalg_qr((q.reshape(0) if mode == "r" else q, r))


def _cutoff(A: Tensor, s: Tensor, atol: Any, rtol: Any) -> Tensor:
    """max(atol, rtol * the largest singular value), (*, 1); rtol defaults to max(m, n) * eps when neither
    tolerance is given."""
    if rtol is None:
        rtol = max(A.shape[-2:]) * float(np.finfo(A.dtype.np).eps) if atol is None else 0.0
    cutoff = amax(s, -1, keepdim=True) * rtol
    return cutoff.clamp(min=atol) if atol is not None else cutoff


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """The number of singular values (|eigenvalues| if ``hermitian``) above the tolerance of ``pinv``, int64."""
    A, = cast_early(Linalg, A)
    check_matrices("matrix_rank", A, square=hermitian)
    s = eigvalsh(A).abs() if hermitian else svdvals(A)
    return (s > _cutoff(A, s, atol, rtol)).sum(-1)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse of A (*, m, n) -> (*, n, m) from its SVD (or eigh if ``hermitian``):
    singular values <= max(atol, rtol * largest) count as 0; rtol defaults to max(m, n) * eps when neither
    tolerance is given. Differentiable through the factorization (away from repeated singular values)."""
    check_matrices("pinv", A, square=False)
    if hermitian:
        w, v = eigh(A)
        s, left, right = w.abs(), v, v.transpose(-2, -1)
    else:
        left, s, right = svd(A, full_matrices=False)
    keep = s > _cutoff(A, s, atol, rtol)
    s_inv = where(keep, 1.0 / where(keep, s if not hermitian else w, 1.0), 0.0)  # no 1/0 in the gradient
    return (right.transpose(-2, -1) * s_inv.unsqueeze(-2)) @ left.transpose(-2, -1)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv`` with rtol ``rcond`` (float32 under CPU autocast, where
    ``linalg.pinv`` refuses a 16-bit matrix, as PyTorch's)."""
    input, = cast_early(Linalg, input)
    with autocast(_device_type(input), enabled=False):  # float32 throughout (no 16-bit GEMM inside), as PyTorch's
        return pinv(input, rtol=rcond)


def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> rt.svd:
    """``torch.svd``, the older form: (U, S, V) with V = Vh^T, reduced unless ``some`` is False; without
    ``compute_uv``, U and V are zero-filled (m, m) and (n, n), as PyTorch's."""
    if not compute_uv:
        *batch, m, n = input.shape
        return rt.svd((input.new_zeros((*batch, m, m)), svdvals(input), input.new_zeros((*batch, n, n))))
    u, s, vh = svd(input, full_matrices=not some)
    return rt.svd((u, s, vh.transpose(-2, -1)))


def torch_qr(input: Tensor, some: bool = True) -> rt.qr:
    """``torch.qr``, the older form: ``linalg.qr`` with mode "reduced" (``some``) or "complete"."""
    return rt.qr(qr(input, "reduced" if some else "complete"))


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> rt.linalg_lstsq:
    """The least-squares X = argmin ||A X - B|| for A (*, m, n), B (*, m, k) (or (m,) with a 2-D A), by the
    pseudo-inverse with rank cutoff ``rcond``. What else comes back depends on ``driver`` as in PyTorch:
    the rank (not with "gels"), the singular values ("gelsd", "gelss"), the squared residuals (not with
    "gelsy", the default; only when m > n and A has full rank); empty tensors otherwise."""
    A, B = cast_early(Linalg, A, B)
    with autocast(_device_type(A), enabled=False):  # float32 throughout (no 16-bit GEMM inside), as PyTorch's
        return _lstsq(A, B, rcond, driver)


def _lstsq(A: Tensor, B: Tensor, rcond: float | None, driver: str | None) -> rt.linalg_lstsq:
    check_matrices("lstsq", A, square=False)
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    X = pinv(A, rtol=rcond) @ Bm
    m, n = A.shape[-2:]
    empty = A.new_zeros((0,))
    rank = matrix_rank(A, rtol=rcond) if driver != "gels" else empty.long()
    full = driver != "gelsy" and m > n and bool((matrix_rank(A, rtol=rcond) == n).all())
    residuals = ((A @ X - Bm) ** 2).sum(-2) if full else empty
    return rt.linalg_lstsq((X.squeeze(-1) if vector else X, residuals.squeeze(-1) if full and vector else residuals,
                            rank, svdvals(A) if driver in ("gelsd", "gelss") else empty))
