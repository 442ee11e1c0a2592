"""Pack / unpack hooks for the arrays an op saves for backward (PyTorch's ``saved_tensors_hooks``).

While a pair of hooks is set, ``function.saved_hooks`` holds it (else None: one global read per op that
saves something). A recorded node then keeps a ``Packed`` tuple instead of its saved arrays: per saved
array what ``pack_hook`` returned for it as a tensor (the input tensor itself when the array is an input's
memory, the output tensor when it is the output's, a new tensor for an array the op computed). Reading
``saved_tensors`` calls ``unpack_hook`` on each packed object, every time it is read, as PyTorch's.
"""
from __future__ import annotations

from typing import Any, Callable

from . import function as _function
from .grad_mode import no_grad

# The pairs entered and not exited, innermost last (only the innermost applies, as PyTorch's).
stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
# The message of the innermost disable_saved_tensors_hooks, or None.
disabled: list[str] = []


class Packed(tuple):
    """A node's saved values, packed: ``(packed object, True)`` per packed tensor, ``(value, False)`` for
    a value saved as it is (None, a number); ``tensors``: a custom Function's (its backward reads tensors)."""

    unpack_hook: Callable[[Any], Any]
    tensors: bool

    def unpack(self) -> tuple[Any, ...]:
        out = []
        for obj, packed in self:
            if not packed:
                out.append(obj)
                continue
            t = self.unpack_hook(obj)
            if not isinstance(t, _function._Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                f"of type {type(t).__name__}")
            out.append(t if self.tensors else t.array)
        return tuple(out)


def pack(ctx: Any, saved: tuple[Any, ...], args: tuple[Any, ...], arrays: list[Any], result: Any) -> None:
    """Replace ``ctx._saved`` (the arrays ``ArrayFunction.apply`` just recorded) by what the innermost
    pack hook returns for each, as a tensor."""
    pack_hook, unpack_hook = stack[-1]
    items: list[tuple[Any, bool]] = []
    with no_grad():  # as PyTorch's: what the hook computes is not recorded (nor packed again)
        for s in saved:
            if not hasattr(s, "shape") or not hasattr(s, "dtype"):  # None, a number, a shape: kept as it is
                items.append((s, False))
            else:
                items.append((pack_hook(_tensor_of(s, args, arrays, result)), True))
    ctx._saved = _packed(items, unpack_hook, False)


def _tensor_of(s: Any, args: tuple[Any, ...], arrays: list[Any], result: Any) -> Any:
    """The tensor whose memory the saved array ``s`` is: the output, an input, or a new one."""
    if s is result.array:
        return result
    for a, x in zip(args, arrays):
        if x is s and isinstance(a, _function._Tensor):
            return a
    return _function._wrap(s, result._device)


def pack_tensors(ctx: Any) -> None:
    """The same for a custom Function's node, whose saved values are tensors."""
    pack_hook, unpack_hook = stack[-1]
    Tensor = _function._Tensor
    with no_grad():
        items = [(pack_hook(t), True) if isinstance(t, Tensor) else (t, False) for t in ctx._saved]
    ctx._saved = _packed(items, unpack_hook, True)


def _packed(items: list[tuple[Any, bool]], unpack_hook: Callable[[Any], Any], tensors: bool) -> Packed:
    p = Packed(items)
    p.unpack_hook, p.tensors = unpack_hook, tensors
    return p


def push(pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
    if disabled:
        raise RuntimeError(disabled[-1])
    stack.append((pack_hook, unpack_hook))
    _function.saved_hooks = stack[-1]


def pop() -> None:
    stack.pop()
    _function.saved_hooks = stack[-1] if stack else None
