"""The one table from minitensor's Functions to ONNX nodes: ``TABLE[name]`` converts a call of the
Function class ``name`` (each op family's CamelCase class, minitensor/functional/). Shapes and attributes
come from the traced call; the batch-like dims that ``dynamic_axes`` frees are kept symbolic where an op
writes a shape (Reshape copies leading dims with 0 and infers one dim with -1; Expand keeps a dim with 1).

Opset 18 or newer is assumed (Reduce* take their axes as an input; LayerNormalization exists).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .trace import Call, Converter

INT64_MAX, INT64_MIN = int(np.iinfo(np.int64).max), int(np.iinfo(np.int64).min)


def _arg(c: Call, i: int, key: str, default: Any) -> Any:
    """An argument given positionally at i or as keyword ``key``."""
    return c.args[i] if i < len(c.args) else c.kwargs.get(key, default)


def _unary(op: str, **attrs: Any) -> Converter:
    return lambda c: c.g.add(op, [c.x(0)], **{k: c.kwargs[v] for k, v in attrs.items()})


def _binary(op: str) -> Converter:
    return lambda c: c.g.add(op, [c.x(0), c.x(1)])


def _alpha(op: str) -> Converter:
    """add/sub: a op alpha * b."""
    def convert(c: Call) -> str:
        alpha, b = _arg(c, 2, "alpha", 1), c.x(1)
        if alpha != 1:
            b = c.g.add("Mul", [b, c.g.const(alpha, c.dtype)])
        return c.g.add(op, [c.x(0), b])
    return convert


def _linear(c: Call) -> str:
    """x W^T + b: one Gemm for a 2-D x, else MatMul with W^T (N-D x keeps its leading dims)."""
    x, w, b = c.x(0), c.x(1), c.x(2)
    if len(c.shape(0)) == 2:
        return c.g.add("Gemm", [x, w, b] if b else [x, w], transB=1)
    y = c.g.add("MatMul", [x, c.g.add("Transpose", [w], perm=[1, 0])])
    return c.g.add("Add", [y, b]) if b else y


def _gelu(c: Call) -> str:
    """Gelu from opset 20; before, 0.5 x (1 + erf(x / sqrt 2)) or its tanh form."""
    x, approximate, g = c.x(0), c.kwargs["approximate"], c.g
    if c.opset >= 20:
        return g.add("Gelu", [x], approximate=approximate)

    def k(v: float) -> str:
        return g.const(v, c.dtype)
    if approximate == "tanh":
        cube = g.add("Mul", [x, g.add("Mul", [x, x])])
        inner = g.add("Mul", [k(math.sqrt(2 / math.pi)), g.add("Add", [x, g.add("Mul", [k(0.044715), cube])])])
        phi = g.add("Tanh", [inner])
    else:
        phi = g.add("Erf", [g.add("Mul", [x, k(1 / math.sqrt(2))])])
    return g.add("Mul", [g.add("Mul", [x, k(0.5)]), g.add("Add", [k(1.0), phi])])


def _softplus(c: Call) -> str:
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold (PyTorch's)."""
    x, beta, g = c.x(0), c.kwargs["beta"], c.g
    bx = x if beta == 1 else g.add("Mul", [x, g.const(beta, c.dtype)])
    y = g.add("Softplus", [bx])
    if beta != 1:
        y = g.add("Div", [y, g.const(beta, c.dtype)])
    return g.add("Where", [g.add("Greater", [bx, g.const(c.kwargs["threshold"], c.dtype)]), x, y])


def _clamp(c: Call) -> str:
    y = c.x(0)
    for i, op in ((1, "Max"), (2, "Min")):
        if c.args[i] is not None:
            y = c.g.add(op, [y, c.x(i)])
    return y


def _conv(c: Call) -> str:
    k = c.kwargs
    top, bottom, left, right = k["padding"]
    inputs = [c.x(0), c.x(1)] + ([c.x(2)] if c.args[2] is not None else [])
    return c.g.add("Conv", inputs, kernel_shape=list(c.shape(1)[2:]), strides=list(k["stride"]),
                   pads=[top, left, bottom, right], dilations=list(k["dilation"]), group=k["groups"])


def _conv_transpose(c: Call) -> str:
    k = c.kwargs
    inputs = [c.x(0), c.x(1)] + ([c.x(2)] if c.args[2] is not None else [])
    return c.g.add("ConvTranspose", inputs, kernel_shape=list(c.shape(1)[2:]), strides=list(k["stride"]),
                   pads=list(k["padding"]) * 2, output_padding=list(k["output_padding"]),
                   dilations=list(k["dilation"]), group=k["groups"])


def _max_pool(c: Call) -> tuple[str, None]:
    """MaxPool; its indices are not exported (ONNX's count over the whole tensor, PyTorch's per plane)."""
    k = c.kwargs
    y = c.g.add("MaxPool", [c.x(0)], kernel_shape=list(k["kernel_size"]), strides=list(k["stride"]),
                pads=list(k["padding"]) * 2, dilations=list(k["dilation"]), ceil_mode=int(k["ceil_mode"]))
    return y, None


def _avg_pool(c: Call) -> str:
    k = c.kwargs
    if k["divisor_override"] is not None:
        raise c.unsupported("avg_pool2d with divisor_override")
    return c.g.add("AveragePool", [c.x(0)], kernel_shape=list(k["kernel_size"]), strides=list(k["stride"]),
                   pads=list(k["padding"]) * 2, ceil_mode=int(k["ceil_mode"]),
                   count_include_pad=int(k["count_include_pad"]))


def _adaptive_avg_pool(c: Call) -> str:
    """GlobalAveragePool for a 1x1 output, AveragePool where the output size divides the input's."""
    size, out = c.shape(0)[2:], c.kwargs["output_size"]
    if tuple(out) == (1, 1):
        return c.g.add("GlobalAveragePool", [c.x(0)])
    if any(s % o for s, o in zip(size, out)):
        raise c.unsupported(f"adaptive_avg_pool2d to {tuple(out)} from {tuple(size)}: ONNX pools only windows "
                            "of one size, so the output size must divide the input size")
    window = [s // o for s, o in zip(size, out)]
    return c.g.add("AveragePool", [c.x(0)], kernel_shape=window, strides=window)


def _ones_or(c: Call, i: int, shape: tuple[int, ...], fill: float) -> str:
    """Argument i, or an initializer of ``fill`` when it is None (an affine-free norm)."""
    return c.x(i) if c.args[i] is not None else c.g.const(np.full(shape, fill, c.dtype))


def _batch_norm(c: Call) -> str:
    if c.kwargs["training"]:
        raise c.unsupported("batch norm with batch statistics (training mode); export with training="
                            "TrainingMode.EVAL, the default, or call model.eval()")
    channels = c.shape(0)[1:2]
    inputs = [c.x(0), _ones_or(c, 3, channels, 1.0), _ones_or(c, 4, channels, 0.0), c.x(1), c.x(2)]
    return c.g.add("BatchNormalization", inputs, epsilon=c.kwargs["eps"])


def _layer_norm(c: Call) -> str:
    nd = c.kwargs["normalized_ndim"]
    inputs = [c.x(0), _ones_or(c, 1, c.shape(0)[-nd:], 1.0)] + ([c.x(2)] if c.args[2] is not None else [])
    return c.g.add("LayerNormalization", inputs, axis=-nd, epsilon=c.kwargs["eps"])


def _reshape(c: Call) -> str:
    """Leading dims the reshape keeps are copied (0), the first one after them is inferred (-1): a
    dynamic batch dim stays free whether it is kept (flatten) or merged (heads into the batch)."""
    src, dst = c.shape(0), c.out[0].shape
    n = 0
    while n < min(len(src), len(dst)) and src[n] == dst[n] != 0:
        n += 1
    target = [0] * n + list(dst[n:])
    if n < len(dst):
        target[n] = -1
    return c.g.add("Reshape", [c.x(0), c.g.ints(target)])


def _expand(c: Call) -> str:
    """Expand to the traced shape, with 1 (keep) where the input already has that size."""
    src, dst = c.shape(0), tuple(c.args[1])
    lead = len(dst) - len(src)
    target = [1 if i >= lead and src[i - lead] == d else d for i, d in enumerate(dst)]
    return c.g.add("Expand", [c.x(0), c.g.ints(target)])


def _stack(c: Call) -> str:
    axis = c.kwargs["axis"]
    parts = [c.g.add("Unsqueeze", [c.x(i), c.g.ints([axis])]) for i in range(len(c.args))]
    return c.g.add("Concat", parts, axis=axis)


def _repeat(c: Call) -> str:
    reps, x = list(c.args[1]), c.x(0)
    extra = len(reps) - len(c.shape(0))
    if extra:
        x = c.g.add("Unsqueeze", [x, c.g.ints(range(extra))])
    return c.g.add("Tile", [x, c.g.ints(reps)])


def _pad(c: Call) -> str:
    widths = c.args[1]
    pads = c.g.ints([lo for lo, _ in widths] + [hi for _, hi in widths])
    return c.g.add("Pad", [c.x(0), pads, c.g.const(c.args[2], c.dtype)], mode="constant")


def _cast(c: Call) -> str:
    from onnx.helper import np_dtype_to_tensor_dtype
    return c.g.add("Cast", [c.x(0)], to=int(np_dtype_to_tensor_dtype(np.dtype(c.args[1]))))


def _reduce(op: str) -> Converter:
    """Sum, Mean, Amax, Amin, Prod, LogSumExp: (x, axes or None for all, keepdims)."""
    return lambda c: c.g.add(op, [c.x(0), *_axes_input(c, c.args[1])], keepdims=int(c.args[2]))


def _axes_input(c: Call, axes: Any) -> list[str]:
    """The axes input of a Reduce* node: none for all axes."""
    return [] if axes is None else [c.g.ints(list(np.atleast_1d(axes)))]


def _variance(std: bool) -> Converter:
    """sum((x - mean)^2) / (n - correction) over the axes (n from the traced shape), its sqrt for std."""
    def convert(c: Call) -> str:
        axes, correction, keepdims = c.args[1:4]
        g, shape = c.g, c.shape(0)
        d = g.add("Sub", [c.x(0), g.add("ReduceMean", [c.x(0), *_axes_input(c, axes)], keepdims=1)])
        ss = g.add("ReduceSum", [g.add("Mul", [d, d]), *_axes_input(c, axes)], keepdims=int(keepdims))
        n = math.prod(shape) if axes is None else math.prod(shape[a] for a in np.atleast_1d(axes))
        var = g.add("Div", [ss, g.const(max(n - correction, 0), c.dtype)])
        return g.add("Sqrt", [var]) if std else var
    return convert


def _pnorm(c: Call) -> str:
    p, axes, keepdims = c.args[1:4]
    if p not in (1, 2):
        raise c.unsupported(f"norm with p={p} (ONNX has the 1- and 2-norms)")
    return c.g.add("ReduceL1" if p == 1 else "ReduceL2", [c.x(0), *_axes_input(c, axes)], keepdims=int(keepdims))


def _extreme_along(c: Call) -> tuple[str, str]:
    """max/min(dim) -> (values, int64 indices of the first extreme)."""
    axis, keepdims, arg = c.args[1:4]
    reduce, find = ("ReduceMax", "ArgMax") if arg == "argmax" else ("ReduceMin", "ArgMin")
    values = c.g.add(reduce, [c.x(0), c.g.ints([axis])], keepdims=int(keepdims))
    return values, c.g.add(find, [c.x(0)], axis=axis, keepdims=int(keepdims))


def _triangle(upper: int) -> Converter:
    return lambda c: c.g.add("Trilu", [c.x(0), c.g.const(c.args[1], np.int64)], upper=upper)


def _getitem(c: Call) -> str:
    """Basic indexing (ints, slices, None, ...): one Slice, then Squeeze the int dims, Unsqueeze the Nones."""
    index, basic = c.args[1], c.args[2]
    if not basic:
        raise c.unsupported("indexing with tensors or lists (advanced indexing)")
    index = index if isinstance(index, tuple) else (index,)
    if any(i is Ellipsis for i in index):
        k = next(n for n, i in enumerate(index) if i is Ellipsis)
        real = sum(i is not None for i in index) - 1
        index = index[:k] + (slice(None),) * (len(c.shape(0)) - real) + index[k + 1:]
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    dim = out_dim = 0
    for i in index:
        if i is None:
            unsqueeze.append(out_dim)
            out_dim += 1
            continue
        if isinstance(i, slice):
            if i != slice(None):
                step = 1 if i.step is None else int(i.step)
                starts.append(int(i.start) if i.start is not None else 0 if step > 0 else INT64_MAX)
                ends.append(int(i.stop) if i.stop is not None else INT64_MAX if step > 0 else INT64_MIN)
                axes.append(dim)
                steps.append(step)
            out_dim += 1
        else:
            starts.append(int(i))
            ends.append(int(i) + 1 if int(i) != -1 else INT64_MAX)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
        dim += 1
    y, g = c.x(0), c.g
    if axes:
        y = g.add("Slice", [y, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    if squeeze:
        y = g.add("Squeeze", [y, g.ints(squeeze)])
    return g.add("Unsqueeze", [y, g.ints(unsqueeze)]) if unsqueeze else y


def _attention(c: Call) -> str:
    """softmax(q k^T scale + bias [+ causal -inf above the diagonal]) v; rows with every key masked give
    0, as minitensor's (a plain Softmax would give nan)."""
    k, g = c.kwargs, c.g
    if k["dropout_p"] > 0:
        raise c.unsupported("scaled_dot_product_attention with dropout_p > 0 (training)")
    rank = len(c.shape(1))
    k_t = g.add("Transpose", [c.x(1)], perm=list(range(rank - 2)) + [rank - 1, rank - 2])
    s = g.add("MatMul", [g.add("Mul", [c.x(0), g.const(k["scale"], c.dtype)]), k_t])
    if c.args[3] is not None:
        s = g.add("Add", [s, c.x(3)])
    if k["causal"]:
        size = (c.shape(0)[-2], c.shape(1)[-2])
        s = g.add("Add", [s, g.const(np.triu(np.full(size, -np.inf, c.dtype), 1))])
    p = g.add("Softmax", [s], axis=-1)
    p = g.add("Where", [g.add("IsNaN", [p]), g.const(0, c.dtype), p])
    return g.add("MatMul", [p, c.x(2)])


_UNARY = {"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt",
          "Abs": "Abs", "Sin": "Sin", "Cos": "Cos", "Reciprocal": "Reciprocal", "Neg": "Neg",
          "Clone": "Identity", "ToDevice": "Identity"}
_BINARY = {"Mul": "Mul", "Div": "Div", "Pow": "Pow", "MatMul": "MatMul", "Maximum": "Max", "Minimum": "Min"}

TABLE: dict[str, Converter] = {
    **{name: _unary(op) for name, op in _UNARY.items()},
    **{name: _binary(op) for name, op in _BINARY.items()},
    "Add": _alpha("Add"), "Sub": _alpha("Sub"),
    "Rsqrt": lambda c: c.g.add("Reciprocal", [c.g.add("Sqrt", [c.x(0)])]),
    "Square": lambda c: c.g.add("Mul", [c.x(0), c.x(0)]),
    "Clamp": _clamp, "Where": lambda c: c.g.add("Where", [c.x(0), c.x(1), c.x(2)]),
    # activations
    "LeakyRelu": _unary("LeakyRelu", alpha="negative_slope"),
    "LeakyReluFromInput": _unary("LeakyRelu", alpha="negative_slope"),
    "Elu": _unary("Elu", alpha="alpha"), "EluFromInput": _unary("Elu", alpha="alpha"),
    "Hardtanh": lambda c: c.g.add("Clip", [c.x(0), c.g.const(c.kwargs["min_val"], c.dtype),
                                           c.g.const(c.kwargs["max_val"], c.dtype)]),
    "Gelu": _gelu, "Softplus": _softplus,
    "Silu": lambda c: c.g.add("Mul", [c.x(0), c.g.add("Sigmoid", [c.x(0)])]),
    "Softmax": _unary("Softmax", axis="axis"), "LogSoftmax": _unary("LogSoftmax", axis="axis"),
    # layers
    "Linear": _linear, "Conv2d": _conv, "ConvTranspose2d": _conv_transpose, "MaxPool2d": _max_pool,
    "AvgPool2d": _avg_pool, "AdaptiveAvgPool2d": _adaptive_avg_pool, "BatchNorm": _batch_norm,
    "LayerNorm": _layer_norm, "Embedding": lambda c: c.g.add("Gather", [c.x(1), c.x(0)], axis=0),
    "ScaledDotProductAttention": _attention,
    # shapes, reductions, casts
    "Reshape": _reshape, "Permute": lambda c: c.g.add("Transpose", [c.x(0)], perm=list(c.args[1])),
    "Expand": _expand, "Repeat": _repeat, "ConstantPad": _pad, "GetItem": _getitem,
    "Cat": lambda c: c.g.add("Concat", [c.x(i) for i in range(len(c.args))], axis=c.kwargs["axis"]),
    "Stack": _stack, "ToDtype": _cast,
    "Sum": _reduce("ReduceSum"), "Mean": _reduce("ReduceMean"), "Amax": _reduce("ReduceMax"),
    "Amin": _reduce("ReduceMin"), "Prod": _reduce("ReduceProd"), "LogSumExp": _reduce("ReduceLogSumExp"),
    "Var": _variance(std=False), "Std": _variance(std=True), "PNorm": _pnorm, "ExtremeAlongDim": _extreme_along,
    "Tril": _triangle(0), "Triu": _triangle(1),
    "Log1p": lambda c: c.g.add("Log", [c.g.add("Add", [c.x(0), c.g.const(1, c.dtype)])]),
    "Expm1": lambda c: c.g.add("Sub", [c.g.add("Exp", [c.x(0)]), c.g.const(1, c.dtype)]),
    # indexing by tensors
    "IndexSelect": lambda c: c.g.add("Gather", [c.x(0), c.x(1)], axis=c.args[2]),
    "Gather": lambda c: c.g.add("GatherElements", [c.x(0), c.x(1)], axis=c.args[2]),
}
# clamp / clamp_min / clamp_max with a tensor bound (their gradients differ from maximum's; the values do not)
TABLE.update({"ClampMin": _binary("Max"), "ClampMax": _binary("Min")})
