"""Memory formats: the order in which a tensor's elements lie in memory, PyTorch's ``torch.memory_format``.

A tensor's shape stays (N, C, H, W); ``channels_last`` only changes its strides to NHWC's:
``stride = (H*W*C, 1, W*C, C)`` (``channels_last_3d``: NDHWC's for (N, C, D, H, W)). The arrays behind
minitensor's tensors have arbitrary strides, so the layouts are real, and the CPU convolution and pooling
kernels read channels-last inputs without a transposing copy. ``preserve_format`` keeps the input's strides
when the input is non-overlapping and dense (each element once, no gaps); otherwise it gives dense strides
in the input's order of dims. ``Tensor.to`` keeps a tensor whose strides suggest the asked format
(PyTorch's ``suggest_memory_format``: channels_last when the strides look like it).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from .backends.generic.sparse import SparseCOO

if TYPE_CHECKING:
    from .tensor import Tensor

Strides = tuple[int, ...]


class memory_format:
    """One of ``contiguous_format``, ``channels_last``, ``channels_last_3d``, ``preserve_format``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitensor.{self.name}"  # as dtypes print (minitensor.float32)

    def __reduce__(self) -> str:
        return self.name  # pickles as the module global: unpickling gives the same object


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# rank, and the dims from the slowest to the fastest in memory
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def as_memory_format(fmt: Any) -> memory_format:
    if fmt is None:
        return preserve_format
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be a minitensor.memory_format, not {type(fmt).__name__}")
    return fmt


def _check_rank(fmt: memory_format, ndim: int) -> Sequence[int] | None:
    if fmt not in _ORDERS:
        return None
    rank, order = _ORDERS[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return order


def format_strides(shape: Sequence[int], fmt: memory_format) -> Strides:
    """The strides (in elements) PyTorch gives a new tensor of ``shape`` in ``fmt``: contiguous strides skip
    empty dims (a step of 1 past them); the channels-last ones multiply the sizes as they are."""
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    order = _check_rank(fmt, len(shape))
    strides = [0] * len(shape)
    step = 1
    if order is None:
        for d in reversed(range(len(shape))):
            strides[d] = step
            step *= max(shape[d], 1)
        return tuple(strides)
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements fill a block of memory once each, in some order of the dims (PyTorch's rule)."""
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _strides_like(shape: Sequence[int], strides: Sequence[int], fmt: memory_format) -> bool:
    """PyTorch's guess that strides are channels-last ones (``is_channels_last_strides_2d/3d``): along
    C, W, H, N the strides grow; the size-1 ambiguities (N111, N1H1, 1C1W) stay contiguous."""
    rank, order = _ORDERS[fmt]
    if len(shape) != rank or strides[1] == 0:
        return False
    low = 0
    for d in (order[-1], *reversed(order[:-1])):  # C, then W, H, (D,) N
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def suggest_memory_format(shape: Sequence[int], strides: Sequence[int]) -> memory_format:
    for fmt in (channels_last, channels_last_3d):
        if _strides_like(shape, strides, fmt):
            return fmt
    return contiguous_format


def is_contiguous_as(shape: Sequence[int], strides: Sequence[int], fmt: memory_format) -> bool:
    """Whether the strides are ``fmt``'s; size-1 dims may have any stride (PyTorch's rule)."""
    if fmt not in _ORDERS:
        order: Sequence[int] = range(len(shape))
    else:
        rank, order = _ORDERS[fmt]
        if len(shape) != rank:
            return False
    expected = 1
    for d in reversed(order):
        if shape[d] == 0:
            return True  # an empty tensor is contiguous in any format
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def infer_dense_strides(shape: Sequence[int], strides: Sequence[int]) -> Strides:
    """Dense strides in the order of ``strides`` (PyTorch's ``infer_dense_strides``, TensorIterator's
    order): an insertion sort from the last dim by stride, larger sizes after equal strides, a zero stride
    (a broadcast dim) staying where it is; sizes 0 and 1 count as 1."""
    perm = list(reversed(range(len(shape))))  # fastest first

    def after(d0: int, d1: int) -> int:  # 1: d0 goes after d1, -1: before, 0: either
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0
    for i in range(1, len(perm)):
        d1 = i
        for d0 in reversed(range(i)):
            order = after(perm[d0], perm[d1])
            if order > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif order < 0:
                break
    out, step = [0] * len(shape), 1
    for d in perm:
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def target_strides(shape: Sequence[int], strides: Sequence[int], fmt: memory_format) -> Strides:
    """The strides of a new tensor made from one with (shape, strides) in ``fmt``: for ``preserve_format``
    the same strides when dense, else dense ones in the same order (PyTorch's ``empty_like``)."""
    if fmt is preserve_format:
        if is_non_overlapping_and_dense(shape, strides):
            return tuple(strides)
        return infer_dense_strides(shape, strides)
    return format_strides(shape, fmt)


def allocate(B: Any, shape: Sequence[int], strides: Sequence[int], dtype: Any) -> Any:
    """Uninitialised memory with these dense strides: a C-order array of the permuted shape, transposed back
    (a plain array), or ``B.empty_strided`` where size-1 or empty dims' strides differ from that."""
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], shape[d] == 1, d))
    inverse = sorted(range(len(order)), key=order.__getitem__)
    a = B.empty(tuple(shape[d] for d in order), dtype).transpose(inverse)
    if tuple(s // a.itemsize for s in a.strides) == tuple(strides):
        return a
    return B.empty_strided(tuple(shape), tuple(strides), dtype)


def _strided(a: Any) -> bool:
    """Whether ``a`` is a strided array (not a sparse one, nor a test's stand-in for a device array)."""
    return type(a) is not SparseCOO and hasattr(a, "flags") and hasattr(a, "strides")


def _shape_strides(t: "Tensor") -> tuple[tuple[int, ...], Strides]:
    return tuple(t.array.shape), t.stride()


def is_contiguous(t: "Tensor", fmt: Any = None) -> bool:
    fmt = as_memory_format(fmt)
    if fmt not in _ORDERS:
        return bool(t.array.flags.c_contiguous)
    return is_contiguous_as(*_shape_strides(t), fmt)


def clone(t: "Tensor", fmt: Any = None) -> "Tensor":
    """A copy of ``t`` with ``fmt``'s strides (differentiable: the gradient passes through)."""
    from .functional.cast import Clone  # here: functional imports this module
    fmt = as_memory_format(fmt)
    if type(t.array) is SparseCOO or (fmt is preserve_format and t.array.flags.c_contiguous):
        return Clone.apply(t)  # a sparse tensor, or the common case: a C-order copy
    shape, strides = _shape_strides(t)
    return Clone.apply(t, strides=target_strides(shape, strides, fmt))


def contiguous(t: "Tensor", fmt: Any = None) -> "Tensor":
    """``t`` when it already is contiguous in ``fmt`` (default ``contiguous_format``), else ``clone(t, fmt)``."""
    fmt = contiguous_format if fmt is None else as_memory_format(fmt)
    if is_contiguous(t, fmt):
        return t
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(t, fmt)


def to(t: "Tensor", out: "Tensor", fmt: Any, copy: bool) -> "Tensor":
    """``Tensor.to``'s last step: ``out`` (``t`` converted to its dtype and device) in ``fmt``. As PyTorch's,
    an unchanged ``t`` whose layout already suggests ``fmt`` is returned as it is."""
    from .functional.cast import Clone
    fmt = as_memory_format(fmt)
    if fmt is preserve_format:
        if out is t:
            return clone(t, fmt) if copy else t
        if not (_strided(t.array) and _strided(out.array)) or t.array.flags.c_contiguous:
            return out
        wanted = target_strides(*_shape_strides(t), fmt)  # a cast or a transfer may have lost them
        return out if out.stride() == wanted else Clone.apply(out, strides=wanted)
    _check_rank(fmt, t.ndim)
    if out is t and not copy and suggest_memory_format(*_shape_strides(t)) is fmt:
        return t
    if out is not t and out.stride() == format_strides(out.shape, fmt):
        return out  # converted already in fmt's strides
    return clone(out, fmt)


def like(input: "Tensor", result: "Tensor", fmt: Any) -> "Tensor":
    """The ``*_like`` creations' last step: ``result`` (made C-contiguous with ``input``'s shape) laid out as
    ``fmt`` asks of ``input``; its values stay, so a ``rand_like`` draws the same numbers in any layout."""
    fmt = as_memory_format(fmt)
    if type(input.array) is SparseCOO:
        return result  # a sparse input: no strides to follow
    if fmt is preserve_format and input.array.flags.c_contiguous:
        return result
    shape, strides = _shape_strides(input)
    wanted = target_strides(shape, strides, fmt)
    if wanted == result.stride():
        return result
    B = result._device.backend
    a = allocate(B, shape, wanted, result.array.dtype)
    B.copy_into(a, result.array)
    result.array = a
    return result


def empty_in(t: "Tensor", fmt: Any) -> "Tensor":
    """``empty(..., memory_format=fmt)``: ``t`` (a new C-contiguous tensor) with ``fmt``'s strides."""
    fmt = as_memory_format(fmt)
    strides = format_strides(t.shape, fmt)
    if strides != t.stride():
        t.array = allocate(t._device.backend, t.shape, strides, t.array.dtype)
    return t
