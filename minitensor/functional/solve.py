"""Inverses, linear systems and determinants of (batches of) square matrices, as ``torch.linalg``.

Every function takes A (*, n, n) with any batch dims *; the gradients are the standard ones (real inputs):
d inv: -A^-T g A^-T; d solve: gB = A^-T g, gA = -gB X^T; d det: g det(A) A^-T; d logabsdet: g A^-T.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from .. import return_types as rt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from ..creation import eye
from ._util import torch_dtype_name
from .indexing import where
from .linalg import matmul
from ..amp.autocast_mode import cast_early
from ..amp.policy import Linalg
from .triangular import tril, triu

__all__ = ["inv", "inverse", "solve", "det", "slogdet", "logdet", "matrix_power", "solve_triangular", "cholesky_solve",
           "cholesky_inverse"]


def check_matrices(name: str, A: Any, square: bool = True, low_precision: bool = False) -> None:
    """PyTorch's checks of a linalg input: a tensor of >= 2 dims, float32/float64 (float16 and bfloat16
    only where ``low_precision``: PyTorch has no 16-bit LAPACK kernels), square if asked."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.dtype in (_dt.float16, _dt.bfloat16) and not low_precision:
        raise RuntimeError(f"linalg.{name}: Low precision dtypes not supported. Got {torch_dtype_name(A.dtype)}")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got {A.dtype}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def mT(B: Backend, a: Any) -> Any:
    """The matrix transpose over the last two axes (a view)."""
    return B.moveaxis(a, -1, -2)


def rows(B: Backend, v: Any) -> Any:
    """v (..., n) as (..., 1, n): a per-matrix scalar or row that broadcasts over a (..., n, n)."""
    return B.expand_dims(v, (-2,))


class Inv(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        y = B.inv(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        y, = ctx.saved_arrays
        yt = mT(B, y)
        return -B.matmul(B.matmul(yt, gy), yt)


def inv(A: Tensor) -> Tensor:
    """A^-1 for A (*, n, n); a singular A raises ``linalg.LinAlgError``."""
    A, = cast_early(Inv, A)  # under CPU autocast a 16-bit matrix comes up to float32, as PyTorch's
    check_matrices("inv", A)
    return Inv.apply(A)


def inverse(input: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``."""
    return inv(input)


class Solve(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        x = B.solve(a, b)
        ctx.save_for_backward(a, x if ctx.needs_input_grad[0] else None)
        return x

    @staticmethod
    def backward(ctx: Any, B: Backend, gx: Any) -> Any:
        a, x = ctx.saved_arrays
        gb = B.solve(mT(B, a), gx)
        return (-B.matmul(gb, mT(B, x)) if ctx.needs_input_grad[0] else None), gb


class SolveTriangular(ArrayFunction):
    """``Solve`` of a triangular a (the other triangle already zeroed) without a singularity check: a zero
    on the diagonal gives inf / NaN, forward and backward (gB = a^-T g, a^T triangular the other way)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any, *, upper: bool) -> Any:
        x = B.solve_triangular(a, b, upper)
        ctx.upper = upper
        ctx.save_for_backward(a, x if ctx.needs_input_grad[0] else None)
        return x

    @staticmethod
    def backward(ctx: Any, B: Backend, gx: Any) -> Any:
        a, x = ctx.saved_arrays
        gb = B.solve_triangular(mT(B, a), gx, not ctx.upper)
        with np.errstate(all="ignore"):  # inf * 0 of a singular a: NaN, as PyTorch
            return (-B.matmul(gb, mT(B, x)) if ctx.needs_input_grad[0] else None), gb


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A X = B (``left``) or X A = B; A (*, n, n), B (*, n, k) or, as PyTorch, a batch of vectors
    (*, n) when B is 1-D or B.shape == A.shape[:-1] (``left=True`` only). The batch dims broadcast."""
    A, B = cast_early(Linalg, A, B)  # float32 under CPU autocast, as PyTorch's
    check_matrices("solve", A)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype} and B of type {B.dtype} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector and not left:
        _check_shapes("solve", A, B.unsqueeze(-1), left)  # PyTorch reports a shape mismatch first
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    X = _solve_matrices("solve", A, B.unsqueeze(-1) if vector else B, left)
    return X.squeeze(-1) if vector else X


def _solve_matrices(name: str, A: Tensor, B: Tensor, left: bool, tri: Tensor | None = None,
                    upper: bool = False) -> Tensor:
    """X with A X = B or X A = B for B (*, n, k) always a matrix (A's batch dims and B's broadcast): the one
    shape rule of ``solve`` and ``solve_triangular``; ``tri`` is the triangle solved with (``upper`` or
    lower), when not A itself."""
    _check_shapes(name, A, B, left)
    M = A if tri is None else tri
    if not left:
        M, B = M.transpose(-2, -1), B.transpose(-2, -1)
    n = M.shape[-1]
    batch = _broadcast_batch(B.shape[:-2], M.shape[:-2])
    M, B = M.expand(batch + (n, n)), B.expand(batch + tuple(B.shape[-2:]))
    X = Solve.apply(M, B) if tri is None else SolveTriangular.apply(M, B, upper=upper != (not left))
    return X.transpose(-2, -1) if not left else X


def _check_shapes(name: str, A: Tensor, B: Tensor, left: bool) -> None:
    """PyTorch's check that A's and B's matrix shapes fit the equation, in its words (the shapes as given)."""
    rows_, cols = (A.shape[-1], B.shape[-2]) if left else (A.shape[-2], B.shape[-1])
    if rows_ != cols:
        raise RuntimeError(f"linalg.{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")


def _broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two batch shapes, with PyTorch's error (a is B's batch, b is A's, as PyTorch's)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
    return tuple(max(x, y) if 0 not in (x, y) else 0 for x, y in zip(a, b))


class Det(ArrayFunction):
    """d det(A) / dA = adj(A)^T = det(U) det(Vh) U diag(prod_{j != i} s_j) Vh from A's SVD: defined for a
    singular A too (where A^-T is not), without dividing by a singular value."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        ctx.save_for_backward(a)
        return B.det(a)

    @staticmethod
    def backward(ctx: Any, B: Backend, gd: Any) -> Any:
        a, = ctx.saved_arrays
        bad = B.expand_dims(~B.isfinite(B.sum(a, (-2, -1), False)), (-2, -1))  # no SVD of it: NaN, as PyTorch
        u, s, vh = B.svd(B.where(bad, 0, a), False)
        ones = B.ones(s.shape[:-1] + (1,), s.dtype)
        before = B.cumprod(B.concatenate([ones, s[..., :-1]], -1), -1)  # prod_{j < i} s_j
        after = B.flip(B.cumprod(B.flip(B.concatenate([s[..., 1:], ones], -1), -1), -1), -1)  # prod_{j > i}
        cofactor = B.matmul(u * rows(B, before * after), vh) * B.expand_dims(B.det(u) * B.det(vh), (-2, -1))
        return B.expand_dims(gd, (-2, -1)) * B.where(bad, np.nan, cofactor)


def det(A: Tensor) -> Tensor:
    """det A (*,) for A (*, n, n); differentiable at singular A too."""
    check_matrices("det", A)
    return Det.apply(A)


class SlogDet(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any) -> Any:
        sign, logabsdet = B.slogdet(a)
        ctx.save_for_backward(a)
        return logabsdet, sign  # the sign is piecewise constant: no gradient (an extra output)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        a, = ctx.saved_arrays
        return B.expand_dims(g, (-2, -1)) * B.inv_unchecked(mT(B, a))  # PyTorch's A^-H: +-inf where A is singular


def slogdet(A: Tensor) -> rt.linalg_slogdet:
    """(sign, log|det A|): the determinant without overflow; sign 0 and logabsdet -inf for a singular A."""
    check_matrices("slogdet", A)
    logabsdet, sign = SlogDet.apply(A)
    return rt.linalg_slogdet((sign, logabsdet))


def torch_slogdet(input: Tensor) -> rt.slogdet:
    """``torch.slogdet`` and ``Tensor.slogdet``: ``linalg.slogdet`` as PyTorch's older type ``slogdet``."""
    return rt.slogdet(slogdet(input))


def logdet(input: Tensor) -> Tensor:
    """log det A: nan where det A < 0, -inf where it is 0 (``torch.logdet``)."""
    sign, logabsdet = slogdet(input)
    return where(sign < 0, float("nan"), logabsdet)


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A^n for an integer n by repeated squaring (O(log n) matmuls); A^0 = I, A^-n = (A^-1)^n (a 16-bit A
    only for n >= 0: inv refuses it)."""
    check_matrices("matrix_power", A, low_precision=True)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(tuple(A.shape)).clone()
    base, result = (inv(A) if n < 0 else A), None
    k = abs(n)
    while k:  # over the bits of n, not the elements
        if k & 1:
            result = base if result is None else matmul(result, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    assert result is not None
    return result.clone() if result is A else result


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (or X A = B) reading only A's upper or lower triangle (with ones on its diagonal if
    ``unitriangular``): a solve of that triangle, so the gradient reaches that triangle only. B is always a
    matrix (*, n, k) (never ``solve``'s batch of vectors)."""
    check_matrices("solve_triangular", A)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if B.dtype != A.dtype:  # PyTorch solves in A's dtype
        B = B.to(A.dtype)
    tri = triu(A, 1 if unitriangular else 0) if upper else tril(A, -1 if unitriangular else 0)
    if unitriangular:
        tri = tri + eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return _solve_matrices("solve_triangular", A, B, left, tri, upper)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X with (L L^T) X = B for L the lower Cholesky factor (or U^T U = A with ``upper``): two triangular
    solves, L Y = B then L^T X = Y. PyTorch's checks first, in its words."""
    B, L = cast_early(Linalg, B, L)
    for name, t in (("b", B), ("u", L)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} dimensions instead")
    if B.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {B.dtype} and A of type "
                           f"{L.dtype} instead.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {L.shape[-2]} by {L.shape[-1]} "
                           "matrices")
    if L.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-2]} by "
                           f"{L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    batch = _broadcast_batch(B.shape[:-2], L.shape[:-2])
    return CholeskySolve.apply(B.expand(batch + tuple(B.shape[-2:])), L.expand(batch + tuple(L.shape[-2:])),
                               upper=bool(upper))


def _factor_solve(B: Backend, low: Any, b: Any) -> Any:
    """x with (low low^T) x = b: two triangular solves (substitution's inf/NaN at a zero diagonal)."""
    return B.solve_triangular(mT(B, low), B.solve_triangular(low, b, False), True)


class CholeskySolve(ArrayFunction):
    """X = (L L^T)^-1 B reading L's lower triangle (U^T U with ``upper``: its upper one). The gradient is
    PyTorch's, of the whole L as given: gB = (L L^T)^-1 gX, gL = -(gB X^T + X gB^T) L (-U (...) for upper)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, b: Any, factor: Any, *, upper: bool) -> Any:
        low = B.tril(mT(B, factor) if upper else factor, 0)
        x = _factor_solve(B, low, b)
        ctx.upper = upper
        ctx.save_for_backward(factor, low, x)
        return x

    @staticmethod
    def backward(ctx: Any, B: Backend, gx: Any) -> Any:
        factor, low, x = ctx.saved_arrays
        with np.errstate(all="ignore"):  # a singular L: its infinities, as PyTorch's
            gb = _factor_solve(B, low, gx)
            common = B.matmul(gb, mT(B, x))
            common = common + mT(B, common)
            return gb, -(B.matmul(factor, common) if ctx.upper else B.matmul(common, factor))


def _check_diagonal(name: str, L: Tensor) -> None:
    """PyTorch's potri check: a zero on a factor's diagonal is its LinAlgError, naming the first (1-based)
    and, for a batch, the batch element (flat); unlike trsm, which divides by it."""
    from ..backends.generic.solve import LinAlgError
    zero = (L.detach().diagonal(dim1=-2, dim2=-1) == 0).cpu().numpy()  # read on the host (a CUDA L too)
    if zero.any():
        batch, where_ = divmod(int(np.argmax(zero.reshape(-1))), L.shape[-1])
        prefix = f"(Batch element {batch}): " if L.ndim > 2 else ""
        raise LinAlgError(f"{name}: {prefix}The diagonal element {where_ + 1} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """(L L^T)^-1 (or (U^T U)^-1) from a Cholesky factor."""
    L, = cast_early(Linalg, L)
    check_matrices("cholesky_inverse", L)
    _check_diagonal("cholesky_inverse", L)
    return cholesky_solve(eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(tuple(L.shape)), L, upper)
