"""``grad_fn._saved_<name>``: one value a node saved for backward, as PyTorch's node attributes give it.

A node's ``saved_names`` (function.py) name what its ``_saved`` holds, in order. As PyTorch's: a value not
saved reads as None (``a * b`` saves ``a`` only when ``b`` requires grad), a number as the number; a leaf
input's memory is that leaf tensor itself (``y.grad_fn._saved_self is a``); the output's memory a new tensor
over it with this node as its ``grad_fn`` (equal to the output, not the output object); another input's a new
tensor with that input's ``grad_fn``, an array the op computed a new tensor without one. Under
``saved_tensors_hooks`` each read calls ``unpack_hook`` on what ``pack_hook`` returned, every time.
"""
from __future__ import annotations

from typing import Any

from . import function as _function
from . import saved_hooks as _saved_hooks


def saved_value(node: Any, j: int) -> Any:
    """The ``j``-th value ``node`` saved (see the module's docstring)."""
    saved = node._saved
    if saved is None:
        raise RuntimeError(_function._FREED)
    if type(saved) is not tuple and isinstance(saved, _saved_hooks.Packed):
        obj, packed = saved[j]
        if not packed:
            return obj
        t = saved.unpack_hook(obj)
        if not isinstance(t, _function._Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t
    s = saved[j] if j < len(saved) else None
    if s is None or not (hasattr(s, "shape") and hasattr(s, "dtype")):
        return s
    for _, edge, is_node, _, _ in node._next:
        if not is_node and edge.array is s:  # a leaf's memory: the leaf (PyTorch's saved original)
            return edge
    t = _function._wrap(s, node._device)
    for _, _, k, owner in node._versions:
        if k == j and owner is not None:  # the output's memory, or a non-leaf input's: with its grad_fn
            t._requires_grad = True
            t.grad_fn = node if owner == "output" else owner
            break
    return t
