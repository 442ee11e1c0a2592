"""Matrix products: ``matmul`` with batch broadcasting and PyTorch's 1-D cases, and fused ``linear``."""
from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor
from ._util import promote
from ..amp.autocast_mode import cast_early
from ..backends.base import Backend

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "linear"]


class MatMul(Function):
    """y = a @ b over broadcast batch dims; a 1-D a is a row (1, k), a 1-D b a column (k, 1), and the
    added dim is dropped from y. da = gy @ b^T, db = a^T @ gy (the engine sums broadcast batch dims)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.a_vec, ctx.b_vec = a.ndim == 1, b.ndim == 1
        if ctx.a_vec:
            a = a[None, :]
        if ctx.b_vec:
            b = b[:, None]
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        y = B.matmul(a, b)
        if ctx.b_vec:
            y = y[..., 0]
        if ctx.a_vec:
            y = y[..., 0, :] if not ctx.b_vec else y[..., 0]
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_tensors
        if ctx.b_vec:
            gy = gy[..., None]
        if ctx.a_vec:
            gy = gy[..., None, :]
        ga = B.matmul(gy, b.swapaxes(-1, -2)) if ctx.needs_input_grad[0] else None
        gb = B.matmul(a.swapaxes(-1, -2), gy) if ctx.needs_input_grad[1] else None
        if ctx.a_vec and ga is not None:
            ga = ga[..., 0, :]
        if ctx.b_vec and gb is not None:
            gb = gb[..., 0]
        return ga, gb


def _check_matmul_shapes(a: Tensor, b: Tensor) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
                           f"{b.ndim}D")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise RuntimeError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                           f"({k_a} != {k_b} in the contracted dimension)")


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """The matrix product with NumPy/PyTorch broadcasting of batch dims."""
    a, b = promote(*cast_early(MatMul, input, other))
    _check_matmul_shapes(a, b)
    try:
        return MatMul.apply(a, b)
    except ValueError:
        raise RuntimeError(f"matmul: batch dimensions of {tuple(a.shape)} and {tuple(b.shape)} cannot be "
                           "broadcast together") from None


def _require_dims(name: str, input: Tensor, n: int, other: Tensor, other_name: str, m: int) -> None:
    """``name``'s check of its operands: ``input`` n-D, then ``other`` (its argument ``other_name``) m-D."""
    for t, what, k in ((input, "input", n), (other, other_name, m)):
        if t.ndim != k:
            raise RuntimeError(f"{name}: {what} must be a {k}D tensor, got shape {tuple(t.shape)}")


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    _require_dims("mm", input, 2, mat2, "mat2", 2)
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    _require_dims("bmm", input, 3, mat2, "mat2", 3)
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    _require_dims("mv", input, 2, vec, "vec", 1)
    return matmul(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    _require_dims("dot", input, 1, other, "other", 1)
    return matmul(input, other)


class Linear(Function):
    """y = x W^T + b for x (..., in), W (out, in), b (out,): one node instead of three.
    dx = gy W, dW = gy^T x and db = sum(gy) over the leading dims. The leading dims are flattened, so that
    each product is one 2-D GEMM (a batched matmul over them is several times slower)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, w: Any, b: Any) -> Any:
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None, w if ctx.needs_input_grad[0] else None)
        y = B.matmul(_rows(x), w.T)
        if b is not None:
            y += b
        return y.reshape(x.shape[:-1] + (w.shape[0],)) if x.ndim != 2 else y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, w = ctx.saved_tensors
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
    if weight.ndim != 2:
        raise RuntimeError(f"linear: weight must be 2D (out_features, in_features), got {tuple(weight.shape)}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"linear: input shape {tuple(input.shape)} does not match weight "
                           f"{tuple(weight.shape)}: expected last dim {weight.shape[1]} (in_features)")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"linear: bias shape {tuple(bias.shape)} does not match out_features "
                           f"{weight.shape[0]}")
    if input.array.dtype != weight.array.dtype:
        raise RuntimeError(f"linear: input dtype {input.dtype} and weight dtype {weight.dtype} differ; "
                           "cast one with .to()")
    return Linear.apply(input, weight, bias)
