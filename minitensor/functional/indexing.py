"""``x[index]`` and ``x[index] = value`` with gradients.

Basic indices (ints, slices with steps, None, Ellipsis) give views, and their gradient is written into a
zero array. Integer and boolean array indices give copies, and their gradient is scatter-added, so
repeated indices accumulate.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.function import Function, IndexedGrad, ViewFunction
from ..autograd.grad_mode import state
from ..tensor import Tensor, _bump_version, as_tensor
from .inplace import detach_saved_from
from ._util import SCALARS

__all__ = ["getitem", "setitem"]

_BASIC = (int, slice, type(None), type(Ellipsis))


def _normalize(index: Any, x: Tensor) -> tuple[Any, bool]:
    """The index with tensors and lists turned into backend arrays, and whether it is basic only."""
    items = index if isinstance(index, tuple) else (index,)
    out, basic = [], True
    for item in items:
        if isinstance(item, (bool, np.bool_)):
            item = np.bool_(item)
        if isinstance(item, _BASIC) and not isinstance(item, bool):
            out.append(item)
            continue
        if isinstance(item, np.integer):
            out.append(int(item))
            continue
        basic = False
        if isinstance(item, Tensor):
            if item._device is not x._device:
                item = item.to(x._device)
            arr = item.array
        else:
            arr = as_tensor(item, device=x._device).array
        if arr.dtype.kind not in "iub":
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, got {arr.dtype}")
        out.append(arr)
    return tuple(out), basic


class GetItem(ViewFunction):
    @staticmethod
    def forward(ctx: Any, B: Any, x: Any, index: Any, basic: bool) -> Any:
        ctx.shape, ctx.index, ctx.basic = x.shape, index, basic
        return x[index]

    @staticmethod
    def backward(ctx: Any, B: Any, gy: Any) -> Any:
        return IndexedGrad(ctx.shape, ctx.index, gy, ctx.basic), None, None


class IndexPut(Function):
    """out = x with out[index] = v (written into x's array: the caller makes this in place).
    dx = gy with the indexed places zeroed; dv = gy[index] (summed back to v's shape by the engine)."""

    @staticmethod
    def forward(ctx: Any, B: Any, x: Any, v: Any, index: Any) -> Any:
        ctx.index = index
        x[index] = v
        return x

    @staticmethod
    def backward(ctx: Any, B: Any, gy: Any) -> Any:
        gx = None
        if ctx.needs_input_grad[0]:
            gx = gy.copy()
            gx[ctx.index] = 0
        gv = gy[ctx.index] if ctx.needs_input_grad[1] else None
        return gx, gv, None


def getitem(x: Tensor, index: Any) -> Tensor:
    idx, basic = _normalize(index, x)
    try:
        return GetItem.apply(x, idx, basic)
    except IndexError as e:
        raise IndexError(f"index {index!r} is invalid for a tensor of shape {tuple(x.shape)}: {e}") from None


def setitem(x: Tensor, index: Any, value: Any) -> None:
    """x[index] = value in place: value broadcasts and is cast to x's dtype."""
    idx, _ = _normalize(index, x)
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
    if not track:
        x.array[idx] = value.array
        _bump_version(x)
        return
    if x.grad_fn is None and x._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if x.grad_fn is not None and x.grad_fn.copies_output_on_write:
        detach_saved_from(x.grad_fn, x)
    out = IndexPut.apply(x, value, idx)
    _bump_version(x)
    x.grad_fn, x._requires_grad = out.grad_fn, True
