"""In-place forms (``add_``, ``+=``, ``copy_``...): the op runs out of place and its result is written
into the tensor's own memory, so views of it see the change; with a graph, the tensor takes the op's node.

Differs from PyTorch: there is no version counter. The op that made the tensor and the in-place op itself
get copies of what they saved from its memory (so ``y = x.exp(); y += 1`` differentiates correctly, where
PyTorch raises); any other op that saved the array sees the new values (PyTorch raises); see
docs/differences.md.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd.grad_mode import state
from ..tensor import Tensor, as_tensor
from ._util import write_error

__all__ = ["inplace", "copy_"]

_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


def _check_castable(t: Tensor, result: Any, name: str) -> None:
    if result.dtype != t.array.dtype and not np.can_cast(result.dtype, t.array.dtype, "same_kind"):
        raise RuntimeError(f"{name}: result type {result.dtype} can't be cast to the desired output type "
                           f"{t.array.dtype}")


def inplace(t: Tensor, op: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """Run ``op(t, *args)`` and make ``t`` hold the result."""
    if state.grad_enabled and t.grad_fn is None and t._requires_grad:
        raise RuntimeError(_LEAF_ERROR)
    out = op(t, *args, **kwargs)
    _check_castable(t, out.array, getattr(op, "__name__", "in-place op") + "_")
    if out.shape != t.shape:
        raise RuntimeError(f"output with shape {tuple(t.shape)} doesn't match the broadcast shape "
                           f"{tuple(out.shape)}")
    for node in (t.grad_fn, out.grad_fn):  # t's maker (exp, sigmoid save y) and this op may hold t's array
        if node is not None:
            detach_saved_from(node, t)
    _write(t, out.array)
    if out.grad_fn is not None:
        t.grad_fn, t._requires_grad = out.grad_fn, True
    return t


def detach_saved_from(node: Any, t: Tensor) -> None:
    """Copy the arrays ``node`` saved that alias ``t``'s memory (``y.mul_(y)`` saves y itself, ``exp``
    saves its output), so that writing into ``t`` cannot change what its backward reads. Only these
    two nodes are checked: other ops that saved ``t`` are not (no version counter; docs/differences.md)."""
    saved, xp = node._saved, t._device.backend.xp
    if saved:
        node._saved = tuple(s.copy() if hasattr(s, "shape") and xp.may_share_memory(s, t.array) else s
                            for s in saved)


def _replaced_by(x: Tensor, src: Tensor) -> Tensor:
    """src broadcast and cast to x's shape and dtype, as a new array that stays in x's graph with a zero
    gradient for x's old value (as PyTorch: after ``y.zero_()`` nothing flows back through y)."""
    from .shape import where
    return where(as_tensor(True, device=x._device), src.to(x.dtype), x)


def copy_(t: Tensor, src: Any) -> Tensor:
    """Write ``src`` (a tensor from any device, an array or a number; broadcast, cast) into ``t``."""
    if not isinstance(src, Tensor):
        src = as_tensor(np.asarray(src, dtype=t.array.dtype) if np.ndim(src) == 0 else src, device=t._device)
    elif src._device is not t._device:
        src = src.to(t._device)
    if state.grad_enabled and (src._requires_grad or t._requires_grad):
        return inplace(t, _replaced_by, src)
    _write(t, src.array)
    return t


def _write(t: Tensor, src: Any) -> None:
    """t's memory = src (broadcast), with PyTorch's errors for a read-only or expanded t."""
    try:
        t.array[...] = src
    except ValueError as e:
        raise write_error(t.array, src.shape, e) from None
