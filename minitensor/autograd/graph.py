"""``torch.autograd.graph``: the graph's nodes as ``Node``, gradient edges, saved-tensor hooks
(``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``), ``register_multi_grad_hook``
and ``increment_version``.

Every ``grad_fn`` is an ``ArrayFunction`` (function.py); ``Node`` is the abstract class it is registered
with, so ``isinstance(t.grad_fn, Node)`` holds and the methods (``name``, ``next_functions``, ``metadata``,
``register_hook``, ``register_prehook``) are the node's own.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, NamedTuple, Sequence

from . import hooks as _hooks
from . import saved_hooks as _saved
from .function import ArrayFunction
from ..tensor import Tensor, _counter

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook"]


class Node(abc.ABC):
    """The abstract class of the nodes of the autograd graph (every ``grad_fn``)."""

    @abc.abstractmethod
    def name(self) -> str:
        ...

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[Any, ...]:
        ...

    @property
    @abc.abstractmethod
    def metadata(self) -> dict[str, Any]:
        ...

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> Any:
        ...

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> Any:
        ...


Node.register(ArrayFunction)


class GradientEdge(NamedTuple):
    """An edge of the graph: a node and which of its outputs (minitensor's nodes have one). A leaf has no
    accumulator node in minitensor: its edge's node is the leaf tensor itself (as in ``next_functions``)."""
    node: Any
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which ``tensor``'s gradient flows."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    return GradientEdge(tensor if tensor.grad_fn is None else tensor.grad_fn, 0)


def increment_version(tensor: Tensor | Sequence[Tensor]) -> None:
    """Count an in-place write made behind autograd's back (the saved-tensor checks then see it)."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        _counter(t)[0] += 1


class saved_tensors_hooks:
    """Within it, ``pack_hook(tensor) -> Any`` is called for each tensor an op saves for backward and the
    graph keeps what it returns; ``unpack_hook(packed) -> Tensor`` gives it back each time backward reads it.
    Only the innermost pair applies. The tensor given to ``pack_hook`` is the op's input or output itself, so
    a hook that returns it unchanged makes a reference cycle (return ``x.detach()``, as PyTorch advises)."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _saved.push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc: Any) -> None:
        _saved.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to the host while the graph waits for backward, and back to their device when it
    reads them (``pin_memory``: accepted, as PyTorch's; minitensor's host copies are not pinned)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> tuple[Any, Tensor]:
            return t.device, t.detach().to("cpu")

        def unpack(packed: tuple[Any, Tensor]) -> Tensor:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Within it, entering ``saved_tensors_hooks`` raises RuntimeError(``error_message``)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _saved.disabled.append(self.error_message)

    def __exit__(self, *exc: Any) -> None:
        _saved.disabled.pop()


class _MultiHandle:
    def __init__(self, handles: list[Any]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> "_MultiHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[[Any], None], *,
                             mode: str = "all") -> _MultiHandle:
    """``mode="all"``: ``fn(grads)`` once per backward that computes a gradient of any of ``tensors``, with
    one gradient per tensor (None for those the backward did not reach), at the end of that backward.
    ``mode="any"``: ``fn(grad)`` on the first gradient computed among ``tensors``, once per backward."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = list(tensors)
    state: dict[str, Any] = {"queue": None}

    def make(i: int) -> Callable[[Tensor], None]:
        def hook(g: Tensor) -> None:
            queue = _hooks._callbacks[-1] if _hooks._callbacks else None
            if state["queue"] is not queue:  # the first gradient of this backward
                state["queue"], state["grads"] = queue, [None] * len(tensors)
                if mode == "any":
                    fn(g)
                elif queue is not None:
                    queue.append(lambda: fn(tuple(state["grads"])))
            if mode == "all":
                state["grads"][i] = g if state["grads"][i] is None else state["grads"][i] + g
        return hook

    handles = [t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)
