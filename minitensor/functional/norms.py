"""``torch.linalg``'s norms, composed of reductions and ``svdvals`` (their gradients follow from those)."""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._util import norm_dim
from .factorization import svdvals
from .solve import check_matrices, inv
from .indexing import where
from ..amp.autocast_mode import cast_early
from ..amp.policy import Linalg
from .reduce import amax, amin, norm as _pnorm, sum

__all__ = ["vector_norm", "matrix_norm", "norm", "cond", "torch_norm"]
__all__ += ["renorm"]

INF = float("inf")


def _floating(name: str, x: Any, dtype: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if dtype is not None:
        x = x.to(_dt.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got {x.dtype}")
    return x


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """(sum |x|^ord)^(1/ord) over ``dim`` (all of x when None); ord inf / -inf: max / min |x|, 0: the count
    of non-zeros."""
    x = _floating("vector_norm", x, dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg.vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    if ord < 0 and x.numel() == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                           "operation does not have an identity")
    return _pnorm(x, ord, dim, keepdim)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The matrix norm over the two dims ``dim`` of A: ord "fro" (sqrt of the sum of squares), "nuc" (the sum
    of the singular values), 2 / -2 (the largest / smallest singular value), 1 / -1 (max / min column sum of
    |A|), inf / -inf (max / min row sum of |A|)."""
    A = _floating("matrix_norm", A, dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if isinstance(dim, int) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = norm_dim(dim[0], A.ndim), norm_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _pnorm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.permute(*[d for d in range(A.ndim) if d not in (d0, d1)], d0, d1))
        r = sum(s, -1) if ord == "nuc" else amax(s, -1) if ord == 2 else amin(s, -1)
        for d in sorted((d0, d1)) if keepdim else ():
            r = r.unsqueeze(d)
        return r
    if ord in (1, -1, INF, -INF):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)  # 1: the sums over rows (columns' sums)
        sums = sum(A.abs(), inner, keepdim=True)
        r = (amax if ord > 0 else amin)(sums, outer, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``torch.linalg.norm``: a vector norm when ``dim`` is an int or A is 1-D (and ord given), a matrix norm
    when ``dim`` is a 2-tuple or A is 2-D; with neither ord nor dim, the 2-norm of A flattened."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if dim is None and ord is not None:
        if not isinstance(A, Tensor) or A.ndim not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {getattr(A, 'ndim', '?')}D.")
        dim = tuple(range(A.ndim))
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number: the largest over the smallest singular value (p None or 2; -2: the inverse),
    else matrix_norm(A, p) * matrix_norm(A^-1, p) (square A)."""
    A, = cast_early(Linalg, A)
    check_matrices("cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(A)
        r = amax(s, -1) / amin(s, -1)
        return r if p != -2 else 1 / r
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def torch_norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """``torch.norm``: a vector norm over ``dim`` for "fro" and numbers (None: 2), a matrix norm for the other
    strings ("nuc": over ``dim`` or all of a 2-D input)."""
    if isinstance(p, str) and p != "fro":
        return matrix_norm(input, p, tuple(range(input.ndim)) if dim is None else dim, keepdim, dtype=dtype)
    if dtype is not None:
        input = input.to(_dt.as_dtype(dtype))
    return _pnorm(input, 2 if p is None else p, dim, keepdim)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled to norm maxnorm (by maxnorm /
    (norm + 1e-7), as PyTorch); the other slices as they are."""
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    axis = norm_dim(dim, input.ndim)
    norms = vector_norm(input, p, [d for d in range(input.ndim) if d != axis], keepdim=True)
    return input * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
