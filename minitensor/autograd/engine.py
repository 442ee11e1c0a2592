"""The backward pass: an iterative topological walk (no recursion limit) from the outputs.

Each node runs once, after every node that feeds it a gradient has run; gradients that fan in are added.
Leaf tensors (``grad_fn is None``, ``requires_grad``) accumulate into ``.grad``; ``autograd.grad`` instead
collects the gradients of the tensors asked for and writes no ``.grad``.
"""
from __future__ import annotations

from typing import Any, Sequence

import minitensor.tensor as _tensor_mod

from .function import Function, IndexedGrad, _check_finite
from .grad_mode import no_grad, state


def _topological_order(roots: Sequence[Function]) -> tuple[list[Function], dict[Function, int]]:
    """Nodes reachable from ``roots`` and, per node, how many edges from reachable nodes point at it."""
    dependencies: dict[Function, int] = {}
    seen = set(roots)
    stack = list(roots)
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for edge in node._edges:
            if isinstance(edge, Function):
                dependencies[edge] = dependencies.get(edge, 0) + 1
                if edge not in seen:
                    seen.add(edge)
                    stack.append(edge)
    return order, dependencies


def _nodes_leading_to(order: Sequence[Function], wanted_nodes: Any, wanted_leaves: set[int]) -> set[Function]:
    """The nodes whose backward feeds a gradient to a wanted node or leaf: their ancestors in the graph."""
    parents: dict[Function, list[Function]] = {}
    stack = []
    for node in order:
        for edge in node._edges:
            if isinstance(edge, Function):
                parents.setdefault(edge, []).append(node)
                if edge in wanted_nodes:
                    stack.append(node)
            elif edge is not None and id(edge) in wanted_leaves:
                stack.append(node)
    needed: set[Function] = set()
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(parents.get(node, ()))
    return needed


def _accumulate(store: dict, owned: set, key: Any, g: Any, B: Any = None) -> None:
    """store[key] += g. A sum the engine made is ``owned`` and is added into in place; the first gradient
    stored may alias an array still in use (an identity backward returns its input), so it is never
    written to."""
    prev = store.get(key)
    if isinstance(g, IndexedGrad):
        if prev is None:
            prev = B.zeros(g.shape, g.value.dtype)
        elif key not in owned:
            prev = B.xp.array(prev, copy=True)  # an array even for 0-d (NumPy gives scalars there)
        owned.add(key)
        if g.basic:
            prev[g.index] += g.value
        else:
            B.index_add(prev, g.index, g.value)
        store[key] = prev
    elif prev is None:
        store[key] = g
    elif key in owned:
        prev += g
        store[key] = prev  # the same array, or a new scalar for 0-d
    else:
        store[key] = prev + g
        owned.add(key)


def run_backward(tensors: Sequence[Any], grads: Sequence[Any], retain_graph: bool,
                 inputs: Sequence[Any] | None = None, allow_unused: bool = False) -> list[Any] | None:
    """Propagate ``grads`` (arrays) from ``tensors``; with ``inputs`` return their gradients instead of
    accumulating into leaves' ``.grad``."""
    node_grads: dict[Function, Any] = {}
    owned: set[Any] = set()  # keys whose stored gradient the engine allocated (safe to add into)
    leaf_grads: dict[int, Any] = {}  # id(leaf tensor) -> array; leaves kept alive by the graph
    leaves: dict[int, Any] = {}
    roots = []
    for t, g in zip(tensors, grads):
        if not t.requires_grad:
            raise RuntimeError("element of the tensors does not require grad and does not have a grad_fn")
        if t.grad_fn is None:
            _accumulate(leaf_grads, owned, id(t), g)
            leaves[id(t)] = t
        else:
            if t.grad_fn not in node_grads:
                roots.append(t.grad_fn)
            _accumulate(node_grads, owned, t.grad_fn, g)

    wanted_nodes: dict[Function, list[int]] = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            if t.grad_fn is not None:
                wanted_nodes.setdefault(t.grad_fn, []).append(i)

    order, dependencies = _topological_order(roots)
    # With ``inputs``, only the nodes on a path to one of them run (and free their saved arrays).
    to_run = None if inputs is None else _nodes_leading_to(order, wanted_nodes, {id(t) for t in inputs})
    ready = [n for n in roots if dependencies.get(n, 0) == 0]
    captured: dict[int, Any] = {}
    anomaly = state.anomaly
    with no_grad():
        while ready:
            node = ready.pop()
            gy = node_grads.pop(node, None)
            for i in wanted_nodes.get(node, ()):
                captured[i] = gy
            runs = to_run is None or node in to_run  # else it feeds no wanted gradient: kept as it is
            if gy is not None and runs:
                retained = node._retained() if node._retained is not None else None
                if retained is not None and inputs is None:
                    _accumulate_leaf_grad(retained, gy)
                B = node._device.backend
                result = type(node).backward(node, B, gy)
                if not isinstance(result, tuple):
                    result = (result,)
                if not retain_graph:
                    node._free()
                for edge, meta, g in zip(node._edges, node._meta, result):
                    if edge is None or g is None:
                        continue
                    shape, dtype = meta
                    if isinstance(g, IndexedGrad):
                        if g.value.dtype != dtype:
                            g.value = g.value.astype(dtype)
                    else:
                        if g.shape != shape:
                            g = B.sum_to_shape(g, shape)
                        if g.dtype != dtype:
                            g = g.astype(dtype)
                    if anomaly:
                        _check_finite(B, getattr(g, "value", g), f"Function '{node.name()}' returned nan or inf values in its "
                                            f"gradient; its forward was called at:\n"
                                            + "".join(node._stack or ["(traceback not recorded)\n"]))
                    if isinstance(edge, Function):
                        _accumulate(node_grads, owned, edge, g, B)
                    else:
                        _accumulate(leaf_grads, owned, id(edge), g, B)
                        leaves[id(edge)] = edge
            elif runs and not retain_graph:
                node._free()
            for edge in node._edges:
                if isinstance(edge, Function):
                    left = dependencies[edge] - 1
                    dependencies[edge] = left
                    if left == 0:
                        ready.append(edge)

    if inputs is None:
        for key, g in leaf_grads.items():
            _accumulate_leaf_grad(leaves[key], g, owned=key in owned)
        return None
    out = []
    for i, t in enumerate(inputs):
        g = captured.get(i) if t.grad_fn is not None else leaf_grads.get(id(t))
        if g is None and not allow_unused:
            raise RuntimeError(f"input {i} of autograd.grad was not used in the graph; pass allow_unused=True "
                               "to get None for it")
        out.append(g)
    return out


def _accumulate_leaf_grad(t: Any, g: Any, owned: bool = False) -> None:
    """``t.grad += g``, in place when ``t.grad`` exists (no new array per step). A new ``.grad`` takes g
    itself when the engine allocated it (``owned``), else a copy: an op's gradient may alias an array still
    in use (an identity backward returns its input), and .grad must own its memory."""
    if t.grad is None:
        B = t._device.backend
        if not owned or type(g) is not B.array_type:  # NumPy 0-d results are scalars: make an array
            g = B.xp.array(g, copy=True)
        t.grad = _tensor_mod._wrap(g, t._device)
    else:
        t.grad.array += g
