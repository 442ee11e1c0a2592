"""PyTorch's other products, composed of matmul, einsum, broadcasting and padding (their gradients follow):
outer / ger, inner, vdot, tensordot, kron, trace, the fused addmm / addmv / addbmm / baddbmm, chain_matmul,
cross (``torch.cross``) and block_diag."""
from __future__ import annotations

import warnings
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._util import named, norm_dim
from .linalg import MatMul, Mv, cross as _linalg_cross, einsum, matmul, multi_dot, mv
from ..amp.autocast_mode import cast_early
from ..amp.policy import Trace
from .shape import cat, pad, reshape
from .triangular import diagonal
from .dtype_match import check_addmm, check_addmv

__all__ = ["outer", "ger", "inner", "vdot", "tensordot", "kron", "trace", "addmm", "addmv", "addbmm", "baddbmm",
           "chain_matmul", "cross", "block_diag"]

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """input[i] * vec2[j] for two 1-D tensors: (n, m)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """``outer``'s old name."""
    return outer(input, vec2)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """The sum over the pairs of dims ``dims`` ((dims of a, dims of b), or an int n: a's last n with b's
    first n) of a * b; the free dims of a, then those of b."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da, db = [norm_dim(d, a.ndim) for d in da], [norm_dim(d, b.ndim) for d in db]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                               f"and second has size {b.shape[y]} in dim {y}")
    sa = [LETTERS[k] for k in range(a.ndim)]
    sb = [LETTERS[a.ndim + k] for k in range(b.ndim)]
    for x, y in zip(da, db):
        sb[y] = sa[x]
    out = [c for k, c in enumerate(sa) if k not in da] + [c for k, c in enumerate(sb) if k not in db]
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum over the last dims of input * other: input.shape[:-1] + other.shape[:-1] (a product with a
    0-d operand)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """sum(input * other) for two 1-D tensors of one length (real inputs: no conjugate)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
                           f"and {other.shape[0]} elements respectively")
    return matmul(input, other)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: the ranks padded with leading 1s, out[i*m + k] = input[i] * other[k] per dim."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(x for s in sa for x in (s, 1)))
    b = reshape(other, tuple(x for s in sb for x in (1, s)))
    return reshape(a * b, tuple(x * y for x, y in zip(sa, sb)))


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum to int64); float32 under CPU autocast."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    input, = cast_early(Trace, input)
    return named(diagonal(input).sum(), "TraceBackward0")


def _fused(name: str, input: Tensor, product: Tensor, beta: Any, alpha: Any, op: type = MatMul) -> Tensor:
    """beta * input + alpha * product, input ignored (nan and all) when beta is 0, as PyTorch. Under autocast
    the input is cast as the product's ``op`` casts (PyTorch's addmm family runs in 16 bits, input included;
    addmv only on CUDA)."""
    input, = cast_early(op, input)
    out = product if alpha == 1 else product * alpha
    _check_broadcast(name, input, out)
    if beta == 0:
        return out
    return out + (input if beta == 1 else input * beta)


def _check_broadcast(name: str, input: Tensor, out: Tensor) -> None:
    shape = tuple(out.shape)
    if input.ndim > out.ndim or any(i not in (1, o) for i, o in zip(input.shape[::-1], shape[::-1])):
        raise RuntimeError(f"{name}: the input {list(input.shape)} does not broadcast to the product's shape "
                           f"{list(shape)}")


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), mat1 (n, m), mat2 (m, p); input broadcasts to (n, p)."""
    for what, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{what} must be a matrix, got {t.ndim}-D tensor")
    if isinstance(input, Tensor):
        check_addmm(*cast_early(MatMul, input, mat1, mat2))
    return named(_fused("addmm", input, matmul(mat1, mat2), beta, alpha), "AddmmBackward0")


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec), mat (n, m), vec (m,): the three of one dtype, as PyTorch's."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if isinstance(input, Tensor):
        check_addmv(*cast_early(Mv, input, mat, vec))
    return _fused("addmv", input, mv(mat, vec), beta, alpha, Mv)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2) per batch: (b, n, m) @ (b, m, p)."""
    _batches("baddbmm", batch1, batch2)
    return _fused("baddbmm", input, matmul(batch1, batch2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * sum_b (batch1[b] @ batch2[b]): (n, p)."""
    _batches("addbmm", batch1, batch2)
    if isinstance(input, Tensor):
        check_addmm(*cast_early(MatMul, input, batch1, batch2))
    return _fused("addbmm", input, einsum("bnm,bmp->np", *cast_early(MatMul, batch1, batch2)), beta, alpha)


def _batches(name: str, b1: Tensor, b2: Tensor) -> None:
    if b1.ndim != 3 or b2.ndim != 3:
        raise RuntimeError(f"{name}: batch1 must be a 3D tensor" if b1.ndim != 3 else
                           f"{name}: batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"{name}: shapes {list(b1.shape)} and {list(b2.shape)} cannot be multiplied")


def chain_matmul(*matrices: Tensor) -> Tensor:
    """``linalg.multi_dot`` of 2-D matrices (PyTorch's deprecated name); one matrix: itself."""
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``torch.cross``: ``linalg.cross`` along ``dim``; without it, along the first dim of size 3 (PyTorch
    warns that this default will change)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                      "dim explicitly or simply use torch.linalg.cross.", UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), -1)
    return _linalg_cross(input, other, dim=dim)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-, 1- or 2-D: a 1-D one is a row) as the diagonal blocks of one matrix, zeros elsewhere."""
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        raise RuntimeError("torch.block_diag: expected at least one tensor")
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = _dt.promote_types(dt, t.dtype)
    blocks = [reshape(t, (1, 1) if t.ndim == 0 else (1, -1) if t.ndim == 1 else tuple(t.shape)).to(dt)
              for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    left, rows = 0, []
    for b in blocks:
        rows.append(pad(b, (left, width - left - b.shape[1])))
        left += b.shape[1]
    return cat(rows, 0)
