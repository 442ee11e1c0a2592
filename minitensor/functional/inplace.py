"""In-place forms (``add_``, ``+=``, ``copy_``...): the op runs out of place and its result is written
into the tensor's own memory, so views of it see the change; with a graph, the tensor takes the op's node.

Differs from PyTorch: there is no version counter, so modifying in place an array that an earlier op saved
for backward is not detected (PyTorch raises); see docs/differences.md.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd.grad_mode import state
from ..tensor import Tensor, as_tensor

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
    t.array[...] = out.array
    if out.grad_fn is not None:
        t.grad_fn, t._requires_grad = out.grad_fn, True
    return t


def _replaced_by(x: Tensor, src: Tensor) -> Tensor:
    """src broadcast and cast to x's shape and dtype, as a new array (x's old value gets no gradient)."""
    from .cast import clone
    return clone(src.to(x.dtype).expand(x.shape))


def copy_(t: Tensor, src: Any) -> Tensor:
    """Write ``src`` (a tensor from any device, an array or a number; broadcast, cast) into ``t``."""
    if not isinstance(src, Tensor):
        src = as_tensor(np.asarray(src, dtype=t.array.dtype) if np.ndim(src) == 0 else src, device=t._device)
    elif src._device is not t._device:
        src = src.to(t._device)
    if state.grad_enabled and (src._requires_grad or t._requires_grad):
        return inplace(t, _replaced_by, src)
    t.array[...] = src.array
    return t
