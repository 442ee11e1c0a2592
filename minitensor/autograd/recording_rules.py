"""The recording backend's rules: the backend methods that under ``create_graph=True`` do not simply run their
generic body on facades (recording_backend.py).

- Creation (``ALWAYS``): a facade even without facade arguments, so what a body writes into it is recorded.
- Forward ops with a Function of their own: that Function (one node, the device's kernel), not their generic
  body's several recorded steps; the piecewise-linear activations' backward methods: gy times a constant.
- ``conv2d_backward`` and ``conv_transpose2d_backward``, whose bodies gather through strided views: the two
  gradients of a bilinear op are ``BilinearGrad`` nodes whose backward is the op itself and the other
  gradient (so any order works); ``im2col`` and ``col2im`` (fold, unfold) are each other's adjoint, so
  they map to unfold's and fold's Functions.
- ``batch_norm_backward`` and ``layer_norm_backward``: their saved mean and invstd are arrays the forward
  computed from x; relinked to x here (``_statistics``), then the generic body records itself.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import minitensor as mt
from .. import dtypes as _dt
from ..backends.base import Backend
from .function import ArrayFunction
from .recording import Rec, tensor_of, unwrap
from .recording_xp import IndexAdd

__all__ = ["ALWAYS", "RULES", "BilinearGrad"]

ALWAYS = {"zeros", "ones", "full", "empty"}


def _create(fill: Callable[..., Any]) -> Callable[..., Rec]:
    def rule(B: Any, shape: Any, *args: Any) -> Rec:
        dtype = args[-1]
        return Rec(fill(tuple(shape) if not isinstance(shape, int) else (shape,), *args[:-1],
                        dtype=_dt.from_numpy_dtype(np.dtype(dtype)), device=B.device))
    return rule


def _index_add(B: Any, out: Any, index: Any, src: Any) -> Any:
    if type(out) is not Rec:
        raise RuntimeError("create_graph=True: a backward body added a recorded array into a raw one "
                           "(B.index_add); make the target with B.zeros")
    index = tuple(unwrap(i) for i in index) if type(index) is tuple else unwrap(index)
    return out.assign(IndexAdd.apply(out.t, tensor_of(src, out.t), index))


def _tensors(B: Any, *args: Any) -> list[Any]:
    """Facades as their tensors, raw arrays as constant tensors on the backend's device, None as None."""
    like = mt.zeros((), device=B.device)
    return [None if a is None else tensor_of(a, like) for a in args]


def _function(cls: Callable[[], type[ArrayFunction]], arrays: int, keywords: tuple[str, ...] = ()
              ) -> Callable[..., Rec]:
    """A forward method as its Function: the first ``arrays`` arguments are arrays, the rest are the
    Function's keywords ``keywords`` in order."""
    def rule(B: Any, *args: Any) -> Rec:
        fn = cls()
        return Rec(fn.apply(*_tensors(B, *args[:arrays]), **dict(zip(keywords, args[arrays:]))))
    return rule


def _op(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A forward method as a public op on tensors (array arguments converted, a tuple result as facades)."""
    def rule(B: Any, *args: Any) -> Any:
        like = mt.zeros((), device=B.device)
        out = fn(*(tensor_of(a, like) if type(a) is Rec or type(a) is B.real.array_type else a for a in args))
        return tuple(Rec(t) for t in out) if isinstance(out, tuple) else Rec(out)
    return rule


def _activation(name: str, *params: str) -> Callable[..., Rec]:
    def cls() -> Any:
        from ..functional import activation
        return getattr(activation, name)
    return _function(cls, 1, params)


def _conv(name: str, params: tuple[str, ...]) -> Callable[..., Rec]:
    def cls() -> Any:
        from ..functional import conv
        return getattr(conv, name)
    return _function(cls, 3, params)


class BilinearGrad(ArrayFunction):
    """One gradient of a bilinear op y = f(x, w) (a convolution or its transpose), from the backend's backward
    method ``bwd``: part 0 is gx = Bx(gy, w), part 1 is gw = Bw(gy, x). Since <c, Bx(gy, w)> = <gy, f(c, w)>
    and <c, Bw(gy, x)> = <gy, f(x, c)>, their gradients are f itself (``fwd``) and the other part.
    ``shape_of`` is the raw array of the argument the part does not read (the backend takes its shape)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, gy: Any, other: Any, *, part: int, shape_of: Any, fwd: str, bwd: str,
                params: tuple[Any, ...]) -> Any:
        ctx.part, ctx.shape_of, ctx.fwd, ctx.bwd, ctx.params = part, shape_of, fwd, bwd, params
        ctx.save_for_backward(gy, other)
        return _part(B, bwd, gy, *((shape_of, other) if part == 0 else (other, shape_of)), part, params)

    @staticmethod
    def backward(ctx: Any, B: Backend, c: Any) -> Any:
        gy, other = ctx.saved_arrays
        need_gy, need_other = ctx.needs_input_grad[:2]
        pair = (c, other) if ctx.part == 0 else (other, c)  # (x, w) of <gy, f(x, w)>
        g_gy = getattr(B, ctx.fwd)(*pair, None, *ctx.params) if need_gy else None
        # d/dw <gy, f(c, w)> = Bw(gy, c) (w's shape from other); d/dx <gy, f(x, c)> = Bx(gy, c)
        g_other = _part(B, ctx.bwd, gy, *pair, 1 - ctx.part, ctx.params) if need_other else None
        return g_gy, g_other


def _part(B: Backend, bwd: str, gy: Any, x: Any, w: Any, part: int, params: tuple[Any, ...]) -> Any:
    """Part ``part`` of ``B.<bwd>(gy, x, w)``: gx (part 0, reading w and x's shape) or gw (part 1)."""
    return getattr(B, bwd)(gy, x, w, *params, needs=(part == 0, part == 1, False))[part]


def _bilinear(fwd: str, bwd: str) -> Callable[..., tuple[Any, Any, Any]]:
    def rule(B: Any, gy: Any, x: Any, w: Any, *params: Any, needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
        g, xt, wt = _tensors(B, gy, x, w)
        parts = [Rec(BilinearGrad.apply(g, other, part=k, shape_of=unwrap(shaped), fwd=fwd, bwd=bwd,
                                        params=params)) if needs[k] else None
                 for k, (other, shaped) in enumerate(((wt, x), (xt, w)))]
        gb = Rec(g).sum(axis=(0,) + tuple(range(2, g.ndim))) if needs[2] else None
        return parts[0], parts[1], gb
    return rule


def _im2col(B: Any, x: Any, kernel: Any, stride: Any, pad4: Any, dilation: Any, out_hw: Any, groups: int) -> Any:
    """im2col as unfold's Function (its backward is col2im: the two are adjoint), for one group and symmetric
    padding (what unfold and fold use); the blocks (1, C*kH*kW, N, L) as the backend gives them."""
    if groups != 1 or pad4[0] != pad4[1] or pad4[2] != pad4[3]:
        return _underivable_call(B, "im2col", x, kernel, stride, pad4, dilation, out_hw, groups)
    from ..functional.fold import Im2Col
    cols = Im2Col.apply(_tensors(B, x)[0], kernel=tuple(kernel), stride=tuple(stride), padding=(pad4[0], pad4[2]),
                        dilation=tuple(dilation), out_hw=tuple(out_hw))
    return Rec(cols.permute(1, 0, 2).unsqueeze(0))


def _col2im(B: Any, rows: Any, out_hw: Any, weight: Any, x_shape: Any, stride: Any, pad4: Any, dilation: Any,
            groups: int, kernel: Any) -> Any:
    """col2im without a weight as fold's Function (its backward is im2col), for rows (N*L, C*kH*kW)."""
    if weight is not None or groups != 1 or pad4[0] != pad4[1] or pad4[2] != pad4[3]:
        return _underivable_call(B, "col2im", rows, out_hw, weight, x_shape, stride, pad4, dilation, groups, kernel)
    from ..functional.fold import Col2Im
    r = _tensors(B, rows)[0]
    cols = r.reshape(x_shape[0], -1, r.shape[1]).permute(0, 2, 1)
    return Rec(Col2Im.apply(cols, x_shape=tuple(x_shape), kernel=tuple(kernel), stride=tuple(stride),
                            padding=(pad4[0], pad4[2]), dilation=tuple(dilation), out_hw=tuple(out_hw)))


def _underivable_call(B: Any, name: str, *args: Any) -> Any:
    from .recording_backend import _underivable
    return _underivable(name, B, args, {})


def _piecewise_linear(name: str) -> Callable[..., Any]:
    """A backward method that is gy times a factor of the saved array with a zero derivative almost everywhere
    (relu's, leaky_relu's, hardtanh's, hardsigmoid's, dropout's): gy times that factor, a constant. One
    recorded product instead of the generic body's several steps."""
    def rule(B: Any, gy: Any, saved: Any, *params: Any, **keywords: Any) -> Any:
        g = gy if type(gy) is Rec else Rec(_tensors(B, gy)[0])
        real = B.real
        return g * getattr(real, name)(real.ones(g.shape, g.dtype), unwrap(saved), *params, **keywords)
    return rule


def _statistics(x: Any, mean: Any, invstd: Any, axes: tuple[int, ...], keepdims: bool) -> tuple[Any, Any]:
    """The saved mean and invstd as functions of x (their values kept): mean(x) and (var(x) + eps)^-1/2, with
    eps read off the saved invstd, so no eps is needed."""
    mean_raw, inv_raw = unwrap(mean), unwrap(invstd)
    if type(x) is not Rec:
        return mean_raw, inv_raw
    m = x.mean(axis=axes, keepdims=keepdims)
    shaped = m if keepdims else m.reshape((1, -1) + (1,) * (x.ndim - 2))
    centred = x - shaped
    var = (centred * centred).mean(axis=axes, keepdims=keepdims)
    return (m - m.t.array) + mean_raw, ((var - var.t.array) + 1 / (inv_raw * inv_raw)) ** -0.5


def _batch_norm_backward(B: Any, gy: Any, x: Any, weight: Any, mean: Any, invstd: Any, training: bool,
                         needs: Any) -> Any:
    if training:
        mean, invstd = _statistics(x, mean, invstd, (0,) + tuple(range(2, x.ndim)), False)
    else:  # the running statistics: constants
        mean, invstd = unwrap(mean), unwrap(invstd)
    return Backend.batch_norm_backward(B, gy, x, weight, mean, invstd, training, needs)


def _layer_norm_backward(B: Any, gy: Any, x: Any, weight: Any, mean: Any, invstd: Any, normalized_ndim: int,
                         needs: Any) -> Any:
    mean, invstd = _statistics(x, mean, invstd, tuple(range(x.ndim - normalized_ndim, x.ndim)), True)
    return Backend.layer_norm_backward(B, gy, x, weight, mean, invstd, normalized_ndim, needs)


def _astype(B: Any, a: Any, dtype: Any) -> Any:
    return a.astype(dtype, copy=False) if type(a) is Rec else B.real.astype(a, dtype)


RULES: dict[str, Callable[..., Any]] = {
    "zeros": _create(mt.zeros), "ones": _create(mt.ones), "empty": _create(mt.zeros), "full": _create(mt.full),
    "copy": lambda B, a: a.copy(), "astype": _astype, "index_add": _index_add,
    "isfinite_all": lambda B, a: B.real.isfinite_all(unwrap(a)),
    "relu": _activation("Relu"), "sigmoid": _activation("Sigmoid"), "tanh": _activation("Tanh"),
    "softmax": _activation("Softmax", "axis"), "log_softmax": _activation("LogSoftmax", "axis"),
    "gelu": _activation("Gelu", "approximate"), "softplus": _activation("Softplus", "beta", "threshold"),
    "erf": lambda B, x: Rec(mt.functional.erf(tensor_of(x, x.t))),
    "conv2d": _conv("Conv2d", ("stride", "padding", "dilation", "groups")),
    "conv_transpose2d": _conv("ConvTranspose2d", ("stride", "padding", "output_padding", "dilation", "groups")),
    "conv2d_backward": _bilinear("conv2d", "conv2d_backward"),
    "conv_transpose2d_backward": _bilinear("conv_transpose2d", "conv_transpose2d_backward"),
    "im2col": _im2col, "col2im": _col2im,
    **{name: _piecewise_linear(name) for name in ("relu_backward", "leaky_relu_backward", "hardtanh_backward",
                                                  "hardsigmoid_backward", "dropout_backward")},
    "batch_norm_backward": _batch_norm_backward, "layer_norm_backward": _layer_norm_backward,
    "logcumsumexp": _op(lambda x, axis: mt.functional.logcumsumexp(x, axis)),  # its body's scan would give nan at -inf
    "logsumexp": _op(lambda x, axes, keepdims: mt.logsumexp(x, axes, keepdims)),
    "lgamma": _op(lambda x: mt.functional.lgamma(x)), "digamma": _op(lambda x: mt.functional.digamma(x)),
    "polygamma": _op(lambda n, x: mt.functional.polygamma(n, x)),
    "diagonal": _op(lambda x, offset, axis1, axis2: mt.diagonal(x, offset, axis1, axis2)),
    "inv": _op(lambda a: mt.linalg.inv(a)), "det": _op(lambda a: mt.linalg.det(a)),
    "solve": _op(lambda a, b: mt.linalg.solve(a, b)), "cholesky": _op(lambda a: mt.linalg.cholesky(a)),
    "svd": _op(lambda a, full: tuple(mt.linalg.svd(a, full_matrices=full))),
    "slogdet": _op(lambda a: tuple(mt.linalg.slogdet(a))),
    "eigh": _op(lambda a, lower: tuple(mt.linalg.eigh(a, "L" if lower else "U"))),
    "qr": _op(lambda a, mode: tuple(mt.linalg.qr(a, mode))),
    "matrix_exp": _op(lambda a: mt.linalg.matrix_exp(a)),
    "solve_triangular": _function(lambda: mt.functional.solve.SolveTriangular, 2, ("upper",)),
}
