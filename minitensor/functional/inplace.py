"""In-place forms (``add_``, ``+=``, ``copy_``...): the op runs out of place and its result is written
into the tensor's own memory, so views of it see the change; with a graph, the tensor takes the op's node.

Every write bumps the tensor's version counter (shared with its views), so an op that saved the old
values raises at backward, as PyTorch (``y = x.exp(); y += 1; y.sum().backward()``). The in-place op
itself keeps a copy of what it saved from the tensor (PyTorch's ``original_self``), as does the op that made
the tensor where it saved its output and PyTorch its input (``Function.copies_output_on_write``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd import function as _function
from ..autograd import views as _views
from ..autograd.grad_mode import state
from ..tensor import Tensor, _bump_version
from ..creation import as_tensor
from ._util import write_error

__all__ = ["inplace", "copy_"]

_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def check_writable(t: Tensor) -> None:
    """PyTorch's refusal, in grad mode, to write in place into a leaf that requires grad or into a view of one
    (made in grad mode): the leaf's gradient would silently miss the write."""
    if state.grad_enabled and t._requires_grad:
        node = t.grad_fn
        if node is None:
            raise RuntimeError(_LEAF_ERROR)
        if node.view_of_leaf:
            raise RuntimeError(_VIEW_ERROR)


def _check_castable(t: Tensor, result: Any, name: str) -> None:
    if result.dtype != t.array.dtype and not np.can_cast(result.dtype, t.array.dtype, "same_kind") \
            and not (result.dtype.kind in "fV" and t.array.dtype.kind in "fV"):  # bfloat16 <-> float16
        raise RuntimeError(f"{name}: result type {result.dtype} can't be cast to the desired output type "
                           f"{t.array.dtype}")


def inplace(t: Tensor, op: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """Run ``op(t, *args)`` and make ``t`` hold the result."""
    check_writable(t)
    first = next(_function._sequence)  # nodes numbered after it are the op's own
    out = op(t, *args, **kwargs)
    _check_castable(t, out.array, getattr(op, "__name__", "in-place op") + "_")
    if out.shape != t.shape:
        raise RuntimeError(f"output with shape {tuple(t.shape)} doesn't match the broadcast shape "
                           f"{tuple(out.shape)}")
    maker = t.grad_fn
    if maker is not None and maker.copies_output_on_write:  # saved y where PyTorch saves x
        detach_saved_from(maker, t)
    for node in _own_nodes(out.grad_fn, first):  # the op may have saved t's array (y.mul_(y)): keep the old
        detach_saved_from(node, t)               # values (an op made of several nodes: in any of them)
    _views.check_rebase(t, out.grad_fn is not None)
    _write(t, out.array)
    if out.grad_fn is not None:
        _views.set_history(t, out)
    return t


def _own_nodes(node: Any, first: int) -> list[Any]:
    """The nodes of node's graph recorded after the sequence number ``first`` (an op's own nodes)."""
    found, stack = [], [node] if node is not None and node._seq > first else []
    while stack:
        n = stack.pop()
        found.append(n)
        stack += [e for _, e, is_node, _, _ in n._next if is_node and e._seq > first and e not in found]
    return found


def detach_saved_from(node: Any, t: Tensor) -> None:
    """Copy the arrays ``node`` saved that alias ``t``'s memory (``y.mul_(y)`` saves y itself), so that
    writing into ``t`` cannot change what its backward reads; those copies need no version check."""
    saved, B = node._saved, t._device.backend
    if saved and type(saved) is tuple:  # not packed by saved_tensors_hooks (writing into those is undefined)
        node._saved = tuple(s.copy() if hasattr(s, "shape") and B.may_share_memory(s, t.array) else s
                            for s in saved)
        if t._vc is not None:
            node._versions = tuple(r for r in node._versions if r[0] is not t._vc)


def _replaced_by(x: Tensor, src: Tensor) -> Tensor:
    """src broadcast and cast to x's shape and dtype, as a new array that stays in x's graph with a zero
    gradient for x's old value (as PyTorch: after ``y.zero_()`` nothing flows back through y)."""
    from .indexing import where
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
    _bump_version(t)
    if _function.tracer is not None:  # an ONNX export is tracing: t now holds src's value
        _function.tracer.written(t, src)
