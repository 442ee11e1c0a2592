"""Tensor hooks (PyTorch's ``register_hook``, ``register_post_accumulate_grad_hook``) and callbacks run at the
end of the current backward (PyTorch's ``Variable._execution_engine.queue_callback``).

A non-leaf tensor's hooks live on its ``grad_fn`` (the node whose output it is) and run on the node's incoming
gradient before the node's backward; a leaf's live on the tensor and run once on its summed gradient of the
backward, before it is accumulated into ``.grad``; post-accumulate hooks run after that, with the tensor.
While some leaf has hooks (``live[0] > 0``) the engine counts each hooked leaf's edges and finishes the leaf as
soon as its last gradient arrives, so DDP can start a bucket's all-reduce while the rest of backward runs.
Without hooks the engine's path is unchanged (one local test per node).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import minitensor.tensor as _tensor_mod

# Hooks registered and not removed: [on leaves, on non-leaves (nodes)]. The engine counts leaf edges only when
# the first is nonzero, and looks for node hooks only when the second is.
live = [0, 0]
_next_id = itertools.count()
_callbacks: list[list[Callable[[], None]]] = []  # one list per running backward, innermost last


class Hooks:
    """A tensor's or node's hooks, in registration order: ``pre`` take and may replace the gradient,
    ``post`` (leaves only) take the tensor after accumulation."""
    __slots__ = ("pre", "post")

    def __init__(self) -> None:
        self.pre: dict[int, Callable] = {}
        self.post: dict[int, Callable] = {}


class RemovableHandle:
    """What the ``register_*hook`` methods return; ``remove()`` unregisters the hook (twice is harmless)."""

    def __init__(self, hooks: dict[int, Callable], leaf: bool) -> None:
        self._hooks, self._kind, self.id = hooks, 0 if leaf else 1, next(_next_id)

    def remove(self) -> None:
        if self._hooks.pop(self.id, None) is not None:
            live[self._kind] -= 1

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _add(t: Any, fn: Callable, post: bool) -> RemovableHandle:
    return add_to(t if t.grad_fn is None else t.grad_fn, fn, post, leaf=t.grad_fn is None)


def add_to(owner: Any, fn: Callable, post: bool, leaf: bool) -> RemovableHandle:
    """Register ``fn`` on a leaf tensor's or a node's hooks (a node's ``post`` hooks are
    ``Node.register_hook``'s, run after its backward: ``run_node_post_hooks``)."""
    hooks = getattr(owner, "_hooks", None)
    if hooks is None:
        hooks = owner._hooks = Hooks()
    table = hooks.post if post else hooks.pre
    handle = RemovableHandle(table, leaf=leaf)
    table[handle.id] = fn
    live[handle._kind] += 1
    return handle


def register_hook(t: Any, fn: Callable[[Any], Any]) -> RemovableHandle:
    """``fn(grad) -> None | Tensor`` runs each time ``t``'s gradient is computed; a returned tensor replaces
    the gradient (what flows on, or what a leaf accumulates)."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _add(t, fn, post=False)


def register_post_accumulate_grad_hook(t: Any, fn: Callable[[Any], None]) -> RemovableHandle:
    """``fn(t)`` runs after ``t.grad`` has been accumulated (leaves only)."""
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _add(t, fn, post=True)


def run_pre_hooks(hooks: Hooks, g: Any, device: Any) -> tuple[Any, bool]:
    """``g`` through the hooks in order; (the gradient, whether a hook replaced it)."""
    replaced = False
    recorded = type(g).__name__ == "Rec"  # create_graph=True: the hook sees (and may return) a graph
    for fn in tuple(hooks.pre.values()):  # a hook may remove itself
        out = fn(g.t if recorded else _tensor_mod._wrap(g, device))
        if out is not None:
            if tuple(out.shape) != tuple(g.shape):
                raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value: "
                                   f"expected {tuple(g.shape)}, got {tuple(out.shape)}")
            g, replaced = (type(g)(out) if recorded else out.array.astype(g.dtype, copy=False)), True
    return g, replaced


def run_node_post_hooks(node: Any, result: tuple[Any, ...], gy: Any, B: Any) -> tuple[Any, ...]:
    """``Node.register_hook`` hooks: ``fn(grad_inputs, grad_outputs)``, one gradient per edge of the node
    (as ``next_functions``), may return replacement grad_inputs; ``result`` with those replaced."""
    recorded = type(gy).__name__ == "Rec"
    device = node.out_device or node._device

    def tensor(g: Any, dev: Any) -> Any:
        if g is None:
            return None
        if type(g).__name__ == "IndexedGrad":  # a slice's gradient: the full array the engine would sum
            full = B.zeros(g.shape, g.value.dtype)
            full[g.index] += g.value
            g = full
        return g.t if recorded else _tensor_mod._wrap(g, dev)

    grads = list(result) + [None] * (max((e[0] for e in node._next), default=-1) + 1 - len(result))
    parts = getattr(gy, "parts", None)  # a multi-output custom Function's gradients, by output
    outs = tuple(tensor(parts.get(k), device) for k in range(len(node._diff))) if parts is not None else \
        (tensor(gy, device),)
    for fn in tuple(node._hooks.post.values()):
        ins = tuple(tensor(grads[i], node._device) for i, *_ in node._next)
        new = fn(ins, outs)
        if new is None:
            continue
        if len(new) != len(ins):
            raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of "
                               f"values (got {len(new)}, but expected {len(ins)})")
        for (i, *_), g in zip(node._next, new):
            grads[i] = None if g is None else (type(gy)(g) if recorded else g.array)
    return tuple(grads)


def hooked_leaf_edges(roots: list[Any]) -> dict[int, int]:
    """id(leaf) -> how many edges of the graph reachable from ``roots`` point at it, for the leaves that have
    hooks (the engine finishes such a leaf when that many gradients have arrived)."""
    counts: dict[int, int] = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        for _, edge, is_node, _, _ in stack.pop()._next:
            if is_node:
                if edge not in seen:
                    seen.add(edge)
                    stack.append(edge)
            elif getattr(edge, "_hooks", None) is not None:
                counts[id(edge)] = counts.get(id(edge), 0) + 1
    return counts


def queue_callback(fn: Callable[[], None]) -> None:
    """Run ``fn()`` when the backward now running ends (after every leaf's ``.grad`` is written)."""
    if not _callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _callbacks[-1].append(fn)


def run_callbacks(queue: list[Callable[[], None]]) -> None:
    """The callbacks queued during one backward, in order (one may queue another)."""
    i = 0
    while i < len(queue):
        queue[i]()
        i += 1
