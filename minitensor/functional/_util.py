"""Helpers shared by the op families: operand promotion, the path of the ops without a gradient, and dim
normalisation."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..tensor import Tensor
from ..creation import as_tensor

SCALARS = (int, float, bool)


def named(out: Any, name: str) -> Any:
    """``out`` with its node named ``name``: PyTorch names a node after the aten op a call reaches, so one
    minitensor op serves several names (indexing: SelectBackward0, SliceBackward0, IndexBackward0...)."""
    node = out.grad_fn
    if node is not None:
        node.torch_name = name
    return out


def as_operand(x: Any, like: Tensor) -> Any:
    """A Python scalar stays a (weak) scalar; NumPy scalars become Python ones (NumPy would treat them as
    strong and upcast float32); anything else array-like becomes a tensor on ``like``'s device."""
    if isinstance(x, np.generic):  # before SCALARS: np.float64 is a subclass of float
        return x.item()
    if isinstance(x, (Tensor,) + SCALARS):
        return x
    return as_tensor(x, device=like._device)


def promote(a: Any, b: Any, floating: bool = False) -> tuple[Any, Any]:
    """Operands cast to PyTorch's result dtype (``floating``: at least the default float dtype)."""
    if not isinstance(a, Tensor):
        if type(a) is float and b.array.dtype.kind == "f":  # fast path: a weak float scalar (not bfloat16)
            return a, b
        a = as_operand(a, b)
    elif not isinstance(b, Tensor):
        if type(b) is float and a.array.dtype.kind == "f":
            return a, b
        b = as_operand(b, a)
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.array.dtype == b.array.dtype and \
            (not floating or a.array.dtype.kind in "fV"):
        return a, b
    dt = _dt.result_type(a, b)
    if floating and not dt.is_floating_point:
        dt = _dt.get_default_dtype()
    return cast(a, dt), cast(b, dt)


def cast(x: Any, dt: _dt.dtype) -> Any:
    """``x`` in dtype ``dt``: tensors through a differentiable cast, Python scalars as they are."""
    if isinstance(x, Tensor) and x.array.dtype != dt.np:
        from .cast import to_dtype
        return to_dtype(x, dt)
    if type(x) is float and dt is _dt.bfloat16:  # NumPy would upcast a bfloat16 array by a Python float
        return dt.np.type(x)
    return x


def keep_bfloat16(y: Any, x: Any) -> Any:
    """``y`` back in ``x``'s dtype when x is bfloat16 and y is not: NumPy upcasts a bfloat16 array combined
    with a Python float (``x * 0.5``) to float32, where PyTorch keeps bfloat16. float16 is kept by NumPy."""
    return y.astype(x.dtype) if x.dtype.kind == "V" and y.dtype != x.dtype else y


def to_float(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype (exp, log, mean... do this in PyTorch)."""
    return x if x.array.dtype.kind in "fV" else cast(x, _dt.get_default_dtype())


class NoGrad(ArrayFunction):
    """An op without a gradient (comparisons, logical and bitwise ops, rounding, integer reductions): it takes
    the one path of every op, ``Function.apply`` (device check, backend, wrapping), and records nothing."""

    differentiable = False

    @staticmethod
    def forward(ctx: Any, B: Backend, *arrays: Any, op: Callable[..., Any]) -> Any:
        return op(B, *arrays)


def gradient_unchanged(ctx: ArrayFunction, B: Backend, grad: Any) -> Any:
    """The backward of an op whose input's gradient is the output's (a cast, a copy, a broadcast view): the
    engine casts it to the input's dtype and sums it to the input's shape."""
    return grad


class ClampMinValue(ArrayFunction):
    """max(x, lo) whose gradient passes everywhere unchanged: PyTorch's ``clamp_`` under ``no_grad`` on a copy
    of x (the eps floor of cosine_similarity's norms and of gaussian_nll_loss's var). ``lo`` is a keyword."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, lo: float) -> Any:
        return keep_bfloat16(B.maximum(x, lo), x)

    backward = staticmethod(gradient_unchanged)


def torch_dtype_name(dt: Any) -> str:
    """PyTorch's scalar type name of a dtype ('Float', 'Long'...), as its "not implemented for" errors say."""
    from ..legacy import LEGACY_NAMES
    return LEGACY_NAMES[_dt.as_dtype(dt)][:-len("Tensor")]


def check_floating(name: str, x: Any) -> None:
    """PyTorch's NotImplementedError (a RuntimeError) for an op without integer kernels given an integer or
    bool tensor."""
    if isinstance(x, Tensor) and x.array.dtype.kind not in "fV":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{torch_dtype_name(x.dtype)}\'')


def check_integer(name: str, x: Any) -> None:
    """PyTorch's NotImplementedError for a bitwise op given a floating tensor."""
    if isinstance(x, Tensor) and x.array.dtype.kind in "fV":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{torch_dtype_name(x.dtype)}\'')


def nondiff(op: Callable[..., Any], *inputs: Any) -> Any:
    """``op(B, *arrays)`` on the inputs' backend, as tensors without grad (a tuple ``op`` result gives a tuple
    of tensors). Python scalars and None pass as they are; NumPy scalars become Python ones and other
    array-likes tensors on the first tensor's device."""
    like = next((x for x in inputs if isinstance(x, Tensor)), None)
    if like is None:
        raise TypeError("expected at least one tensor argument")
    return NoGrad.apply(*(x if x is None else as_operand(x, like) for x in inputs), op=op)


def tensor_sequence(name: str, tensors: Any) -> list[Any]:
    """``tensors`` as a list; one Tensor is refused as PyTorch refuses it (iterating it would join its rows)."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return list(tensors)


def norm_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) made non-negative, with PyTorch's error otherwise (0-d tensors take 0, -1)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def norm_dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """``dim`` (None, int, or a sequence of ints, negative allowed) as a sorted tuple, None for all."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        dims: Sequence[int] = (int(dim),)
    else:
        if not isinstance(dim, (tuple, list)) or not all(isinstance(d, (int, np.integer)) for d in dim):
            shown = type(dim).__name__ if not isinstance(dim, (tuple, list)) else \
                f"{type(dim).__name__} of {', '.join(sorted({type(d).__name__ for d in dim}))}"
            raise TypeError(f"argument 'dim' must be an int or a tuple of ints, not {shown}")
        dims = tuple(dim)
        if not dims:
            return None
    normed = [norm_dim(d, ndim) for d in dims]
    axes = tuple(sorted(set(normed)))
    if len(axes) != len(dims):  # PyTorch names the first repeated dim, made non-negative
        repeated = next(a for i, a in enumerate(normed) if a in normed[:i])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    if ndim == 0:
        return None
    return axes


def out_of_range(index: Any, low: int, high: int) -> int | None:
    """A value of the integer array ``index`` outside [low, high), or None: one min and one max, so CuPy,
    which wraps bad indices silently, and ``take`` (which wraps negative ones) raise as PyTorch does."""
    if index.size == 0:
        return None
    lo, hi = int(index.min()), int(index.max())
    return lo if lo < low else hi if hi >= high else None


def broadcast_shapes_or_none(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """The broadcast shape of ``shapes``, None where they do not broadcast (for the caller's own error)."""
    try:
        return np.broadcast_shapes(*(tuple(s) for s in shapes))
    except ValueError:
        return None


def broadcast_error(shapes: Sequence[Sequence[int]]) -> RuntimeError:
    """PyTorch's error for shapes that do not broadcast, naming the rightmost dim (counted in the
    broadcast result) where two sizes differ and neither is 1."""
    ndim = max(len(s) for s in shapes)
    for k in range(1, ndim + 1):
        sizes = [s[-k] for s in shapes if len(s) >= k and s[-k] != 1]
        other = [n for n in sizes if n != sizes[0]] if sizes else []
        if other:
            return RuntimeError(f"The size of tensor a ({sizes[0]}) must match the size of tensor b "
                                f"({other[0]}) at non-singleton dimension {ndim - k}")
    return RuntimeError(f"shapes {', '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together")


def write_error(dst: Any, src_shape: Sequence[int], error: ValueError, whole: Any = None) -> Exception:
    """PyTorch's error for a failed write of an array of ``src_shape`` into the array ``dst`` (part of the
    tensor's array ``whole``, if given); NumPy's ValueError says "read-only" or "could not broadcast".
    Other errors come back as they were."""
    whole = dst if whole is None else whole
    if getattr(getattr(whole, "flags", None), "writeable", True):  # CuPy arrays have no such flag
        if "broadcast" not in str(error):
            return error
        if len(src_shape) > dst.ndim:
            return RuntimeError(f"the number of sizes provided ({dst.ndim}) must be greater or equal to the "
                                f"number of dimensions in the value being written ({len(src_shape)}): cannot "
                                f"write shape {tuple(src_shape)} into shape {tuple(dst.shape)}")
        for d in range(1, len(src_shape) + 1):
            if src_shape[-d] not in (1, dst.shape[-d]):
                return RuntimeError(f"The expanded size of the tensor ({dst.shape[-d]}) must match the existing "
                                    f"size ({src_shape[-d]}) at non-singleton dimension {dst.ndim - d}. Target "
                                    f"sizes: {list(dst.shape)}. Tensor sizes: {list(src_shape)}")
        return error
    from ..autograd.views import overlaps
    if overlaps(whole):  # an expanded (broadcast) view, unfold's overlapping windows
        return RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                            "single memory location. Please clone() the tensor before performing the operation.")
    return RuntimeError("the tensor's memory is read-only (it shares a read-only NumPy array, as from_numpy "
                        "of one gives); clone() the tensor before writing into it")
