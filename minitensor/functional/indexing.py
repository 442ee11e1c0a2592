"""``x[index]`` and ``x[index] = value`` with gradients, read by PyTorch's rules.

PyTorch applies the basic items first (an int selects, a slice slices, None adds a dim, Ellipsis fills),
which gives a view, and then indexes that view with the index tensors at the dims they stand at. So an int
never counts as an advanced index: for x of shape (2, 3, 4), ``x[0, :, [0, 1]]`` is ``x[0][:, [0, 1]]``,
shape (3, 2), where NumPy, which broadcasts the int with the list, puts the index dims first: (2, 3). On the
view NumPy's rule is PyTorch's: the broadcast shape of the index tensors replaces their dims where they are
adjacent and goes in front where slices separate them. A bool (or, deprecated, uint8) tensor of k dims is a
mask over k dims; a Python bool adds a dim of size 1 indexed by [0] (True) or [] (False).

So an index becomes ``(pre, adv)`` with ``x[index] == x[pre][adv]`` in NumPy (either part may be None).
Basic indices give views, and their gradient is written into a zero array; index arrays give copies, and
their gradient is scatter-added, so repeated indices accumulate.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..autograd import function as _function
from ..autograd import views as _views
from ..autograd.function import ArrayFunction, IndexedGrad, ViewFunction
from ..autograd.grad_mode import state
from ..tensor import Tensor, _bump_version
from ..creation import as_tensor
from ._util import SCALARS, broadcast_error, named, out_of_range, promote, torch_dtype_name, write_error
from .inplace import check_writable, detach_saved_from
from ..backends.base import Backend

__all__ = ["getitem", "setitem", "where", "masked_fill"]

_FULL = slice(None)
_BASIC = (int, slice, type(None), type(Ellipsis))  # bool is an int: told apart by ``type(item) is bool``
_SEQUENCES = (list, tuple, range, np.ndarray)  # PyTorch reads any of these as an index tensor
_PLAIN = {np.dtype(np.int64), np.dtype(np.bool_)}  # sets of dtypes: comparing a dtype with a type is slow
_INDEX = _PLAIN | {np.dtype(np.int32), np.dtype(np.uint8)}


def _items(index: Any) -> tuple:
    """The index as a tuple of items. A short list holding a sequence, tensor, slice, None or Ellipsis is
    still read as a tuple (PyTorch's deprecated NumPy heuristic, with its warning)."""
    if type(index) is tuple:
        return index
    if type(index) is list and len(index) < 32 and any(
            isinstance(i, (Tensor, slice) + _SEQUENCES) or i is None or i is Ellipsis for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; use "
                      "x[tuple(seq)] instead of x[seq]", UserWarning, stacklevel=5)
        return tuple(index)
    return (index,)


def _convert(item: Any, x: Tensor) -> Any:
    """One item as an int, slice, None, Ellipsis, bool, or an int64/int32/bool array on x's device."""
    if item is None or item is Ellipsis or type(item) is int or type(item) is slice:
        return item
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, Tensor):
        arr = item.array if item._device is x._device else item.to(x._device).array
    elif isinstance(item, _SEQUENCES):
        a = np.asarray(item)  # PyTorch reads a list as int64 unless it is bool or uint8
        arr = as_tensor(a if a.dtype.kind in "bu" else a.astype(np.int64), device=x._device).array
    else:
        try:
            return operator.index(item)
        except TypeError:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                             f"are valid indices (got {type(item).__name__})") from None
    dt = arr.dtype
    if dt not in _INDEX:
        raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got {dt}")
    if dt.kind == "u":
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                      "instead.", UserWarning, stacklevel=5)
        arr = arr != 0
    if arr.ndim == 0:  # a 0-d integer tensor selects like an int; a 0-d mask is a bool
        return bool(arr) if arr.dtype.kind == "b" else int(arr)
    return arr


def _parse(index: Any, x: Tensor) -> tuple[Any, Any]:
    """``(pre, adv)``: the basic items (a view) and the index arrays with slices on that view."""
    t = type(index)
    if t is int or t is slice:  # the hot paths: basic items only, or slices with CPU index tensors
        return index, None
    if t is Tensor and _plain(index, x):
        return None, index.array
    if t is tuple:
        kinds = 0  # 1: an int or None; 2: a plain index tensor; 4: anything else
        for i in index:
            ti = type(i)
            if ti is int or i is None:
                kinds |= 1
            elif ti is Tensor and _plain(i, x):
                kinds |= 2
            elif ti is not slice and i is not Ellipsis:
                kinds = 4
                break
        if kinds < 2:
            return index, None
        if kinds == 2:  # slices and index tensors alone: NumPy's placement is PyTorch's
            return None, tuple(i.array if type(i) is Tensor else i for i in index)
    items = list(_items(index))
    for j, it in enumerate(items):  # a loop, not a comprehension: the warnings' stacklevel counts frames
        items[j] = _convert(it, x)
    nd, specified = x.ndim, 0
    for it in items:
        if not isinstance(it, _BASIC):
            specified += it.ndim if it.dtype.kind == "b" else 1
        elif it is not None and it is not Ellipsis and type(it) is not bool:
            specified += 1
    if specified > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    if sum(it is Ellipsis for it in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    pre: list = []
    adv: list = []  # one entry per dim of x[pre]
    split = arrays = False  # split: an int, None or bool is present, so x[index] is not NumPy's x[items]
    d = 0  # the dim of x the next item indexes
    for it in items:
        if type(it) is bool:
            pre.append(None)
            adv.append(x._device.backend.zeros((int(it),), np.int64))
            split = arrays = True
        elif it is None:
            pre.append(None)
            adv.append(_FULL)
            split = True
        elif it is Ellipsis:
            pre.append(it)
            adv += [_FULL] * (nd - specified)
            d += nd - specified
        elif isinstance(it, _BASIC):
            pre.append(it)
            if type(it) is slice:
                adv.append(_FULL)
            else:
                split = True
            d += 1
        else:
            arrays = True
            k = it.ndim if it.dtype.kind == "b" else 1
            _check_array(it, x.shape, d)
            pre += [_FULL] * k
            adv.append(it)
            d += k
    if not arrays:
        return tuple(pre), None
    if not split:
        return None, tuple(items)
    while adv[-1] is _FULL:
        adv.pop()
    return tuple(pre), tuple(adv)


def _plain(i: Tensor, x: Tensor) -> bool:
    """An int64 or bool CPU tensor of at least one dim, on x's device: NumPy checks its bounds and shape."""
    a = i.array
    return type(a) is np.ndarray and i._device is x._device and a.ndim > 0 and a.dtype in _PLAIN


def _check_array(it: Any, shape: tuple, d: int) -> None:
    """A mask must match the dims it covers; index values must lie in [-n, n) (CuPy would wrap them)."""
    if it.dtype.kind == "b":
        for j, (m, n) in enumerate(zip(it.shape, shape[d:])):
            if m != n:
                raise IndexError(f"The shape of the mask {list(it.shape)} at index {j} does not match the shape "
                                 f"of the indexed tensor {list(shape)} at index {d + j}")
    elif not isinstance(it, np.ndarray):  # NumPy checks on its own
        bad = out_of_range(it, -shape[d], shape[d])
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {shape[d]}")


def _take(a: Any, pre: Any, adv: Any) -> Any:
    if adv is None:
        return a[pre]
    return a[adv] if pre is None else a[pre][adv]


def _put(a: Any, pre: Any, adv: Any, v: Any) -> None:
    if adv is None:
        a[pre] = v
    elif pre is None:
        a[adv] = v
    else:
        a[pre][adv] = v  # a[pre] is a view: the write lands in a


def _target(a: Any, pre: Any, adv: Any) -> Any:
    """The part of ``a`` that ``_put`` writes (for the error message when the write fails)."""
    a = a if pre is None else a[pre]
    return a if adv is None else a[adv]


def _fill(spec: Any, arrays: tuple) -> Any:
    """The index ``spec`` with the index tensors' arrays in its None places (spec None: the one array)."""
    if spec is None:
        return arrays[0]
    if len(spec) == len(arrays):  # index tensors only
        return arrays
    it = iter(arrays)
    return tuple([next(it) if s is None else s for s in spec])


def _spec(index: Any, adv: Any) -> tuple[Any, tuple[Tensor, ...]]:
    """adv with None where it holds an index tensor's own array, and those tensors: passed to a Function as
    arguments and saved, so that a write into one before backward raises (as PyTorch's SavedVariable)."""
    if type(adv) is not tuple:
        return (None, (index,)) if isinstance(index, Tensor) and index.array is adv else (adv, ())
    owners = {id(i.array): i for i in (index if type(index) is tuple else _items(index)) if isinstance(i, Tensor)}
    spec, tensors = [], []
    for a in adv:
        t = owners.get(id(a))
        spec.append(a if t is None else None)
        if t is not None:
            tensors.append(t)
    return tuple(spec), tuple(tensors)


class GetItem(ViewFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, index: Any, basic: bool, *arrays: Any) -> Any:
        ctx.shape, ctx.index, ctx.basic = x.shape, index, basic
        if arrays:  # index tensors, where index has None
            ctx.save_for_backward(*arrays)
            return x[_fill(index, arrays)]
        out = x[index]
        if basic and type(out) is not type(x):  # ints on every dim: NumPy's scalar is a copy, and writes
            # into it (x[0].mul_(2)) would be lost; with an Ellipsis after them NumPy gives a 0-d view
            out = x[(*index, ...) if type(index) is tuple else (index, ...)]
        return out

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        n = len(ctx.needs_input_grad) - 3  # index tensors
        index = _fill(ctx.index, ctx.saved_arrays) if n else ctx.index
        return (IndexedGrad(ctx.shape, index, gy, ctx.basic), None, None) + (None,) * n


class IndexPut(ArrayFunction):
    """out = x with out[pre][adv] = v (written into x's array: the caller makes this in place).
    dx = gy with the written places zeroed; dv = gy[pre][adv] (summed back to v's shape by the engine)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, v: Any, pre: Any, adv: Any, *arrays: Any) -> Any:
        ctx.pre, ctx.adv = pre, adv
        if arrays:  # index tensors, where adv has None (as GetItem's)
            ctx.save_for_backward(*arrays)
            adv = _fill(adv, arrays)
        _put(x, pre, adv, v)
        return x

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        gx, pre, n = None, ctx.pre, len(ctx.needs_input_grad) - 4  # n: index tensors
        adv = _fill(ctx.adv, ctx.saved_arrays) if n else ctx.adv
        if ctx.needs_input_grad[0]:
            gx = B.copy(gy)  # an array even for 0-d (NumPy gives scalars there)
            _put(gx, pre, adv, 0)
        gv = _take(gy, pre, adv) if ctx.needs_input_grad[1] else None
        return (gx, gv, None, None) + (None,) * n


def getitem(x: Tensor, index: Any) -> Tensor:
    pre, adv = _parse(index, x)
    try:
        if adv is None:
            out = GetItem.apply(x, pre, True)
            if out.grad_fn is not None:
                out.grad_fn.torch_name = _basic_node_name(index, x.array.shape)
            return out
        if pre is not None:  # two steps: the view's gradient is written into x's by the basic step
            x = GetItem.apply(x, pre, True)
        spec, tensors = _spec(index, adv)
        return named(GetItem.apply(x, spec, False, *tensors), "IndexBackward0")
    except IndexError as e:
        raise IndexError(f"index {index!r} is invalid for a tensor of shape {tuple(x.shape)}: {e}") from None


def _basic_node_name(index: Any, shape: tuple[int, ...]) -> str:
    """PyTorch's node for ``x[index]`` with ints, slices, None and Ellipsis: the last op its indexing applies
    left to right (an int: select, a slice: slice, None: unsqueeze). Inside a tuple a slice over the whole dim
    applies nothing, and where nothing applies the node is an alias."""
    if type(index) is not tuple:
        return _SINGLE_ITEM_NODES.get(type(index), "SelectBackward0")
    name, d = "AliasBackward0", 0
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    for it in index:
        if it is Ellipsis:
            d += len(shape) - consumed
        elif it is None:
            name = "UnsqueezeBackward0"
        elif type(it) is slice:
            if it.indices(shape[d]) != (0, shape[d], 1):
                name = "SliceBackward0"
            d += 1
        else:
            name, d = "SelectBackward0", d + 1
    return name


_SINGLE_ITEM_NODES = {slice: "SliceBackward0", type(None): "UnsqueezeBackward0", type(Ellipsis): "AliasBackward0"}


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """x[index] = value in place: value broadcasts (leading size-1 dims dropped) and is cast to x's dtype."""
    pre, adv = _parse(index, x)
    if not isinstance(value, Tensor):
        if isinstance(value, SCALARS) or isinstance(value, np.generic):
            value = np.asarray(value, dtype=x.array.dtype)
        value = as_tensor(value, dtype=x.dtype, device=x._device)
    elif value.array.dtype != x.array.dtype:
        value = value.to(x.dtype)
    if value._device is not x._device:
        raise RuntimeError(f"setitem: value is on {value._device} but the tensor is on {x._device}; move it "
                           "with .to()")
    track = state.grad_enabled and (x._requires_grad or value._requires_grad)
    check_writable(x)  # first: PyTorch's leaf errors come before its view-rebase ones
    _views.check_rebase(x, track)
    try:
        if not track:
            _put(x.array, pre, adv, value.array)
            _bump_version(x)
            if _function.tracer is not None:  # an ONNX export is tracing: x's values changed outside a Function
                _function.tracer.put(x, value)
            return
        if value.ndim and value.shape[0] == 1:  # PyTorch drops them; the gradient then sums to the right shape
            lead = next((i for i, s in enumerate(value.shape) if s != 1), value.ndim)
            value = value.reshape(value.shape[lead:])
        if x.grad_fn is not None and x.grad_fn.copies_output_on_write:
            detach_saved_from(x.grad_fn, x)  # softmax and others save their output: keep its old values
        spec, tensors = _spec(index, adv) if adv is not None else (None, ())
        out = IndexPut.apply(x, value, pre, spec, *tensors)
        _bump_version(x)
    except ValueError as e:
        raise write_error(_target(x.array, pre, adv), value.shape, e, x.array) from None
    _views.set_history(x, out)


class Where(ArrayFunction):
    @staticmethod
    def forward(ctx: Any, B: Backend, cond: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(cond)
        return B.where(cond, a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        cond, = ctx.saved_arrays
        _, need_a, need_b = ctx.needs_input_grad
        return (None, B.where(cond, gy, 0) if need_a else None, B.where(cond, 0, gy) if need_b else None)


_ABSENT: Any = object()  # where's input and other when not given (None is a wrong value, not an absent one)


def where(condition: Tensor, input: Any = _ABSENT, other: Any = _ABSENT) -> Any:
    """input where condition else other, broadcasting all three; scalars allowed. ``where(condition)`` alone
    is ``nonzero(condition, as_tuple=True)``."""
    if input is _ABSENT or other is _ABSENT:
        return _where_nonzero(condition, input, other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two scalars: a 0-d tensor of their PyTorch dtype (float32 for floats) carries dtype and device.
        input = as_tensor(input, dtype=_dt.result_type(input, other),
                          device=condition.device if isinstance(condition, Tensor) else None)
    a, b = promote(input, other)
    if not isinstance(condition, Tensor):
        condition = as_tensor(condition, device=(a if isinstance(a, Tensor) else b).device)
    if condition.array.dtype != np.bool_:
        if condition.array.dtype != np.uint8:
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{torch_dtype_name(condition.dtype)}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed "
                      "in a future version of PyTorch. Use a boolean condition instead.", stacklevel=2)
        condition = condition != 0
    try:
        return Where.apply(condition, a, b)
    except ValueError:
        raise broadcast_error([getattr(t, "shape", ()) for t in (condition, a, b)]) from None


def _where_nonzero(condition: Any, input: Any, other: Any) -> Any:
    """The one-argument ``where``, with PyTorch's TypeErrors for a non-tensor condition or one of the two
    values missing."""
    if input is not _ABSENT or other is not _ABSENT:
        raise TypeError("where() received an invalid combination of arguments - got one of input and other, but "
                        "expected one of: (Tensor condition) or (Tensor condition, Tensor input, Tensor other)")
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(condition).__name__}")
    from .scatter import nonzero  # scatter builds on this module
    return nonzero(condition, as_tuple=True)


# ATen's C++ names of the scalar types, as its masked_fill error prints them
_C_TYPE_NAMES = {"Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
                 "Byte": "unsigned char", "Char": "signed char", "Short": "short int", "Int": "int",
                 "Long": "long int"}


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``value`` where ``mask`` is True; mask and input broadcast together (``masked_fill_`` needs the
    result to keep input's shape)."""
    if isinstance(mask, Tensor) and mask.array.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_TYPE_NAMES.get(torch_dtype_name(mask.dtype), mask.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s)")
        value = value.to(input.dtype)
    elif input.array.dtype.kind not in "fV" and isinstance(value, float):
        raise RuntimeError(f"masked_fill: value {value} cannot be converted to {input.dtype} without overflow")
    # broadcasts input and mask together, as PyTorch's out-of-place form
    return named(where(mask, value, input), "MaskedFillBackward0")
