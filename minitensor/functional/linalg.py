"""Matrix products: ``matmul`` with batch broadcasting and PyTorch's 1-D cases, and fused ``linear``."""
from __future__ import annotations

from typing import Any, Sequence

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ._util import broadcast_error, named, promote
from .out_arg import call_with_out
from ..amp.autocast_mode import cast_early
from .shape import stack
from .dtype_match import check_addmm, check_matmul, check_same
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO
from .sparse_products import sparse_matmul

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "linear", "einsum", "vecdot", "cross", "multi_dot"]


class MatMul(ArrayFunction):
    """y = a @ b over broadcast batch dims; a 1-D a is a row (1, k), a 1-D b a column (k, 1), and the
    added dim is dropped from y. da = gy @ b^T, db = a^T @ gy (the engine sums broadcast batch dims)."""
    torch_name = "MmBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.a_vec, ctx.b_vec = a.ndim == 1, b.ndim == 1
        # the inputs themselves, not their 2-D views: a double backward links them to the inputs' graphs
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        if ctx.a_vec:
            a = a[None, :]
        if ctx.b_vec:
            b = b[:, None]
        y = B.matmul(a, b)
        if ctx.b_vec:
            y = y[..., 0]
        if ctx.a_vec:
            y = y[..., 0, :] if not ctx.b_vec else y[..., 0]
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        if ctx.b_vec:
            gy = gy[..., None]
            b = None if b is None else b[:, None]
        if ctx.a_vec:
            gy = gy[..., None, :]
            a = None if a is None else a[None, :]
        ga = B.matmul(gy, b.swapaxes(-1, -2)) if ctx.needs_input_grad[0] else None
        gb = B.matmul(a.swapaxes(-1, -2), gy) if ctx.needs_input_grad[1] else None
        if ctx.a_vec and ga is not None:
            ga = ga[..., 0, :]
        if ctx.b_vec and gb is not None:
            gb = gb[..., 0]
        return ga, gb


class Mv(MatMul):
    """``mv``: MatMul under its own name, for autocast (PyTorch lowers mv on CUDA only)."""


class Dot(MatMul):
    """``dot``: MatMul under its own name, for autocast (PyTorch runs dot in its inputs' dtype)."""


def _check_matmul_shapes(a: Tensor, b: Tensor) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
                           f"{b.ndim}D")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise RuntimeError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                           f"({k_a} != {k_b} in the contracted dimension)")


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The matrix product with NumPy/PyTorch broadcasting of batch dims (written into ``out`` where given)."""
    if out is not None:
        return call_with_out("matmul", matmul, out, input, other, same_dtype=True)
    dims = input.ndim, other.ndim
    return named(_product(input, other, MatMul),
                 _MATMUL_NODES.get(dims) or ("CloneBackward0" if dims[0] == 2 else "UnsafeViewBackward0"))


# PyTorch's node for matmul by the operands' dims: the aten op it reaches (mm, mv, dot), then the view or copy
# that shapes the result (a matrix times a batch is a clone; other batched products' flattened GEMM is
# un-flattened by _unsafe_view)
_MATMUL_NODES = {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0", (1, 2): "SqueezeBackward4"}


def _product(input: Tensor, other: Tensor, op: type[MatMul]) -> Tensor:
    """matmul as the node ``op`` (its name is what autocast's policy reads)."""
    if type(getattr(input, "array", None)) is SparseCOO or type(getattr(other, "array", None)) is SparseCOO:
        return sparse_matmul(input, other)  # PyTorch's mm / @ with a sparse COO matrix
    a, b = cast_early(op, input, other)
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        check_matmul(a, b)
    else:
        a, b = promote(a, b)
    _check_matmul_shapes(a, b)
    try:
        return op.apply(a, b)
    except ValueError:  # batch dims that do not broadcast: PyTorch names them as an elementwise op's
        raise broadcast_error([a.shape[:-2], b.shape[:-2]]) from None


def _require_dims(name: str, input: Tensor, n: int, other: Tensor, other_name: str, m: int) -> None:
    """``name``'s check of its operands: ``input`` n-D, then ``other`` (its argument ``other_name``) m-D."""
    for t, what, k in ((input, "input", n), (other, other_name, m)):
        if t.ndim != k:
            raise RuntimeError(f"{name}: {what} must be a {k}D tensor, got shape {tuple(t.shape)}")


def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return call_with_out("mm", mm, out, input, mat2, same_dtype=True)
    _require_dims("mm", input, 2, mat2, "mat2", 2)
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return call_with_out("bmm", bmm, out, input, mat2, same_dtype=True)
    _require_dims("bmm", input, 3, mat2, "mat2", 3)
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {tuple(input.shape)} and {tuple(mat2.shape)}")
    return named(matmul(input, mat2), "BmmBackward0")


def mv(input: Tensor, vec: Tensor) -> Tensor:
    _require_dims("mv", input, 2, vec, "vec", 1)
    return _product(input, vec, Mv)


def dot(input: Tensor, other: Tensor) -> Tensor:
    _require_dims("dot", input, 1, other, "other", 1)
    return _product(input, other, Dot)


class Linear(ArrayFunction):
    """y = x W^T + b for x (..., in), W (out, in), b (out,): one node instead of three.
    dx = gy W, dW = gy^T x and db = sum(gy) over the leading dims. The leading dims are flattened, so that
    each product is one 2-D GEMM (a batched matmul over them is several times slower)."""
    torch_name = "AddmmBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, w: Any, b: Any) -> Any:
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None, w if ctx.needs_input_grad[0] else None)
        y = B.matmul(_rows(x), w.T)
        if b is not None:
            y += b
        return y.reshape(x.shape[:-1] + (w.shape[0],)) if x.ndim != 2 else y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, w = ctx.saved_arrays
        need_x, need_w, need_b = ctx.needs_input_grad
        g2 = _rows(gy)
        gx = B.matmul(g2, w).reshape(gy.shape[:-1] + (w.shape[1],)) if need_x else None
        gw = B.matmul(g2.T, _rows(x)) if need_w else None
        gb = g2.sum(axis=0) if need_b else None
        return gx, gw, gb


def _rows(a: Any) -> Any:
    """(..., n) as a 2-D (rows, n) array (a view when the layout allows)."""
    return a.reshape(-1, a.shape[-1]) if a.ndim != 2 else a


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias; input (*, in_features), weight (out_features, in_features)."""
    input, weight, bias = cast_early(Linear, input, weight, bias)
    if weight.ndim == 1 and bias is None:  # PyTorch's linear is then input @ weight: a dot along the last dim
        return matmul(input, weight)
    w_shape, x_shape = weight.array.shape, input.array.shape  # plain tuples: this runs for every layer
    if len(w_shape) != 2:
        raise RuntimeError(f"linear: weight must be 2D (out_features, in_features), got {w_shape}")
    if not x_shape or x_shape[-1] != w_shape[1]:
        raise RuntimeError(f"linear: input shape {x_shape} does not match weight {w_shape}: expected last dim "
                           f"{w_shape[1]} (in_features)")
    if bias is not None and bias.array.shape != w_shape[:1]:
        raise RuntimeError(f"linear: bias shape {tuple(bias.shape)} does not match out_features {w_shape[0]}")
    if bias is None:
        check_matmul(input, weight)
    else:
        check_addmm(bias, input, weight)
    y = Linear.apply(input, weight, bias)
    if len(x_shape) != 2 or bias is None:  # PyTorch's node: addmm's for a matrix and a bias, else these
        named(y, _LINEAR_NODES[min(len(x_shape), 3), bias is not None] if bias is None or input.is_contiguous()
              else "AddBackward0")  # a strided input with a bias: PyTorch's matmul, then add_(bias)
    return y


# PyTorch's linear node by the input's dims (3: three or more) and whether there is a bias (a contiguous input
# with a bias is flattened to one addmm and viewed back)
_LINEAR_NODES = {(1, False): "SqueezeBackward4", (2, False): "MmBackward0", (3, False): "UnsafeViewBackward0",
                 (1, True): "ViewBackward0", (3, True): "ViewBackward0"}


def _einsum_terms(equation: str, n: int) -> tuple[list[str], str]:
    """The operands' subscripts and the output's (implicit mode: the letters used once, sorted, after
    ``...``)."""
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != n:
        raise RuntimeError(f"einsum(): {'more' if n > len(terms) else 'fewer'} operands were provided than "
                           f"specified in the equation")
    if not arrow:
        letters = lhs.replace(",", "").replace(".", "")
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return terms, out


def _einsum_grad(B: Backend, terms: list[str], out: str, i: int, arrays: Sequence[Any], g: Any) -> Any:
    """d/d operand i: the einsum of g with the other operands onto operand i's subscripts. A letter repeated
    in operand i (a diagonal) becomes a fresh letter tied to it by an identity matrix; a letter only
    operand i has (summed there alone) is left out and the gradient broadcast along it."""
    a, term = arrays[i], terms[i]
    ins = [out] + [t for j, t in enumerate(terms) if j != i]
    ops = [g] + [x for j, x in enumerate(arrays) if j != i]
    head, _, tail = term.partition("...")
    sizes = dict(zip(head, a.shape)) | dict(zip(tail[::-1], a.shape[::-1]))
    fresh = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in "".join(terms) + out)
    letters = list(term)
    for k, c in enumerate(letters):
        if c != "." and c in letters[:k]:
            letters[k] = next(fresh)
            ins.append(c + letters[k])
            ops.append(B.eye(sizes[c], sizes[c], a.dtype))
    present = set("".join(ins))
    target = "".join(c for c in letters if c == "." or c in present)
    gi = B.einsum(",".join(ins) + "->" + target, ops)
    kept_head = sum(c in present for c in letters[:len(head)])
    if "..." in term:  # broadcast dims g has beyond operand i's own: summed here (size-1 ones by the engine)
        extra = gi.ndim - (len(target) - 3) - (a.ndim - (len(term) - 3))
        gi = gi.sum(axis=tuple(range(kept_head, kept_head + extra))) if extra else gi
    dropped = [k for k, c in enumerate(letters) if c != "." and c not in present]
    if not dropped:
        return gi
    axes = [k if k < len(head) else a.ndim - (len(letters) - k) for k in dropped]  # positions in operand i
    gi = B.expand_dims(gi, tuple(axes))
    return B.broadcast_to(gi, tuple(a.shape[ax] if ax in axes else n for ax, n in enumerate(gi.shape)))


class Einsum(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, equation: str, *arrays: Any) -> Any:
        ctx.equation = equation
        ctx.save_for_backward(*arrays)
        return B.einsum(equation, arrays)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        arrays = ctx.saved_arrays
        terms, out = _einsum_terms(ctx.equation, len(arrays))
        return (None, *(_einsum_grad(B, terms, out, i, arrays, g) if need else None
                        for i, need in enumerate(ctx.needs_input_grad[1:])))


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation as ``torch.einsum``: ``"bij,bjk->bik"``, ``...`` for broadcast dims, the implicit
    output (no ``->``), any number of operands (or one list of them)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    for x in operands:
        if not isinstance(x, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, got {type(x).__name__}")
    _einsum_terms(equation, len(operands))
    for x in operands[1:]:
        check_same(operands[0], x)
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    summed = arrow and "..." in lhs and "..." not in out  # PyTorch sums the broadcast dims NumPy would keep
    try:
        y = Einsum.apply(f"{lhs}->...{out}" if summed else equation, *operands)
    except ValueError as e:
        raise RuntimeError(f"einsum(): {e}") from None
    return y.sum(tuple(range(y.ndim - len(out)))) if summed and y.ndim > len(out) else y


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """sum(x * y) over ``dim``, x and y broadcast (``linalg.vecdot``)."""
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (``linalg.cross``); the other dims broadcast, the ranks
    must agree."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    check_same(input, other)
    d = dim % max(input.ndim, 1)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    a, b = input.unbind(d), other.unbind(d)
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], d)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """tensors[0] @ tensors[1] @ ...: 2-D matrices, the first and the last may be 1-D (a row, a column)."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for k, t in enumerate(tensors):
        if t.ndim != 2 and not (t.ndim == 1 and k in (0, len(tensors) - 1)):
            raise RuntimeError(f"multi_dot(): tensor {k} must be 2D{' or 1D' if k in (0, len(tensors) - 1) else ''} "
                               f"but got {t.ndim}D")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


__all__ += ["bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]; weight (out, in1, in2)."""
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.ndim} dimension(s)")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got {x.shape[-1]} but "
                               f"expected {weight.shape[k]}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias
