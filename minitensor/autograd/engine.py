"""The backward pass: nodes run in reverse creation order (no recursion, no limit on depth) from the outputs.

Every node gets a sequence number when ``Function.apply`` records it, and a node is always created after the
nodes of its inputs; so running the nodes that received a gradient from the highest number down runs each
one after every node that feeds it a gradient, without a pass over the graph to count dependencies.
Gradients that fan in are added. Leaf tensors (``grad_fn is None``, ``requires_grad``) accumulate into
``.grad``; ``autograd.grad`` instead collects the gradients of the tensors asked for and writes no ``.grad``.
"""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from heapq import heappop, heappush
from typing import Any, Iterator, Sequence

import minitensor.tensor as _tensor_mod

from . import function as _function
from . import hooks as _hooks
from .function import ArrayFunction, IndexedGrad, _check_finite
from .grad_mode import state
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO
from ..backends.ieee_errors import IGNORE, restore, silence

_Rec: Any = None  # recording.Rec, bound by higher_order.py once a create_graph backward has imported it
_floor = threading.local()  # .seq, set by ``pruned_below`` in this thread: no older node leads to the inputs


@contextmanager
def pruned_below(seq: int) -> Iterator[None]:
    """Within it (in this thread), ``autograd.grad`` may skip every node numbered below ``seq``: the caller
    (torch.func's transforms) knows that its inputs were made after node ``seq``, so only newer nodes can lead
    to them (a functional optimiser's parameters carry all its past steps' graphs, which the walk then never
    visits)."""
    previous, _floor.seq = getattr(_floor, "seq", -1), seq
    try:
        yield
    finally:
        _floor.seq = previous


def _refs_of_a_private_result() -> int:
    """What ``sys.getrefcount`` reports, in ``run_backward``'s loop, for a gradient that only the node's
    result tuple and the loop's variable hold (measured the same way, since interpreters count differently)."""
    result = (bytearray(1),)
    g = result[0]
    return sys.getrefcount(g)


_PRIVATE_REFS = _refs_of_a_private_result()


def _topological_order(roots: Sequence[ArrayFunction],
                       floor: int = -1) -> tuple[list[ArrayFunction], dict[ArrayFunction, int]]:
    """Nodes reachable from ``roots`` and, per node, how many edges from reachable nodes point at it
    (``autograd.grad`` walks the graph to find the part it needs); nodes numbered below ``floor`` are not
    walked (PyTorch's engine prunes its walk the same way, by topological number)."""
    dependencies: dict[ArrayFunction, int] = {}
    seen = set(roots)
    stack = list(roots)
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for _, edge, is_node, _, _ in node._next:
            if is_node and edge._seq >= floor:
                dependencies[edge] = dependencies.get(edge, 0) + 1
                if edge not in seen:
                    seen.add(edge)
                    stack.append(edge)
    return order, dependencies


def _nodes_leading_to(order: Sequence[ArrayFunction], wanted_nodes: Any, wanted_leaves: set[int]) -> set[ArrayFunction]:
    """The nodes whose backward feeds a gradient to a wanted node or leaf: their ancestors in the graph."""
    parents: dict[ArrayFunction, list[ArrayFunction]] = {}
    stack = []
    for node in order:
        for _, edge, is_node, _, _ in node._next:
            if is_node:
                parents.setdefault(edge, []).append(node)
                if edge in wanted_nodes:
                    stack.append(node)
            elif id(edge) in wanted_leaves:
                stack.append(node)
    needed: set[ArrayFunction] = set()
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(parents.get(node, ()))
    return needed


def _accumulate(store: dict, owned: set, key: Any, g: Any, B: Backend = None, private: bool = False) -> None:  # type: ignore[assignment]
    """store[key] += g. A sum the engine made, or a ``private`` gradient (an array nothing else refers to),
    is ``owned`` and is added into in place; any other gradient may alias an array still in use (an
    identity backward returns its input), so it is never written to."""
    prev = store.get(key)
    if isinstance(g, IndexedGrad):
        if prev is None:
            prev = B.zeros(g.shape, g.value.dtype)
        elif key not in owned:
            prev = B.copy(prev)  # an array even for 0-d (NumPy gives scalars there)
        owned.add(key)
        if g.basic:
            prev[g.index] += g.value
        else:
            B.index_add(prev, g.index, g.value)
        store[key] = prev
    elif prev is None:
        store[key] = g
        if private:
            owned.add(key)
    elif B is not None and (type(prev) is SparseCOO) != (type(g) is SparseCOO):  # dense + sparse: dense
        dense, sparse = (g, prev) if type(prev) is SparseCOO else (prev, g)
        store[key] = B.sparse_add_dense(dense, sparse)
        owned.add(key)
    elif key in owned:
        prev += g
        store[key] = prev  # the same array, or a new scalar for 0-d
    else:
        store[key] = prev + g
        owned.add(key)


def run_backward(tensors: Sequence[Any], grads: Sequence[Any], retain_graph: bool,
                 inputs: Sequence[Any] | None = None, allow_unused: bool = False,
                 create_graph: bool = False) -> list[Any] | None:
    """Propagate ``grads`` (arrays; facades with ``create_graph``) from ``tensors``; with ``inputs`` return
    their gradients instead of accumulating into leaves' ``.grad``. Then run the callbacks queued during it
    (``hooks.queue_callback``). ``create_graph``: every backward runs recorded (higher_order.py)."""
    queue: list[Any] = []
    _hooks._callbacks.append(queue)
    quiet = silence(IGNORE)  # IEEE special values compute silently, as PyTorch's (backends/ieee_errors.py)
    # the caller's floor is this call's alone: a backward run inside it (a custom Function's own
    # autograd.grad) may differentiate an older graph, and walks it whole
    floor, _floor.seq = getattr(_floor, "seq", -1), -1
    try:
        result = _run_backward(tensors, grads, retain_graph, inputs, allow_unused, create_graph, floor)
    finally:
        _floor.seq = floor
        restore(quiet)
        _hooks._callbacks.pop()
    _hooks.run_callbacks(queue)
    return result


def _run_backward(tensors: Sequence[Any], grads: Sequence[Any], retain_graph: bool,
                  inputs: Sequence[Any] | None, allow_unused: bool, create_graph: bool,
                  floor: int) -> list[Any] | None:
    graph: Any = None
    if create_graph:
        from . import higher_order
        graph = higher_order
    node_grads: dict[ArrayFunction, Any] = {}  # the gradient summed so far of each node waiting to run
    pending: list[tuple[int, ArrayFunction]] = []  # heap of (-sequence number, node): the newest node first
    owned: set[Any] = set()  # keys whose stored gradient nothing outside the engine holds (safe to add into)
    leaf_grads: dict[int, Any] = {}  # id(leaf tensor) -> array; leaves kept alive by the graph
    leaves: dict[int, Any] = {}
    for t, g in zip(tensors, grads):
        if not t.requires_grad:
            raise RuntimeError("element of the tensors does not require grad and does not have a grad_fn")
        if t.grad_fn is None:
            _accumulate(leaf_grads, owned, id(t), g)
            leaves[id(t)] = t
        else:
            if t.grad_fn not in node_grads:
                heappush(pending, (-t.grad_fn._seq, t.grad_fn))
            _accumulate(node_grads, owned, t.grad_fn, g)

    wanted_nodes: dict[ArrayFunction, list[int]] = {}
    to_run = None
    if inputs is not None:
        for i, t in enumerate(inputs):
            if t.grad_fn is not None:
                wanted_nodes.setdefault(t.grad_fn, []).append(i)
        # Only the nodes on a path to one of the inputs run (and free their saved arrays). A node leads to
        # an input only if it is newer than the input's node (a node is always newer than its inputs' nodes):
        # when every input has a node, the walk stops below the oldest of them.
        if wanted_nodes and all(t.grad_fn is not None for t in inputs):
            floor = max(floor, min(node._seq for node in wanted_nodes))
        order, _ = _topological_order([node for _, node in pending], floor)
        to_run = _nodes_leading_to(order, wanted_nodes, {id(t) for t in inputs})
    # Hooked leaves are finished as soon as their last gradient arrives (DDP overlaps its all-reduces).
    hooked = _hooks.hooked_leaf_edges([node for _, node in pending]) if _hooks.live[0] and inputs is None else None
    captured: dict[int, Any] = {}
    node_hooks = _hooks.live[1]  # some non-leaf tensor has hooks (else no node is asked)
    anomaly = state.anomaly
    refcount = sys.getrefcount
    profiler = _function.profiler  # one read per backward call; each node reports to it when set
    event = None
    grad_enabled, state.grad_enabled = state.grad_enabled, create_graph  # records only with create_graph
    try:
        while pending:
            node = heappop(pending)[1]
            gy = node_grads.pop(node)
            if wanted_nodes:
                for i in wanted_nodes.get(node, ()):
                    captured[i] = gy
            if node_hooks and node._hooks is not None:  # non-leaf hooks: after capture (PyTorch), before retain_grad
                gy = _hooks.run_pre_hooks(node._hooks, gy, node.out_device or node._device)[0]
            if to_run is not None and node not in to_run:  # it feeds no wanted gradient: kept as it is
                continue
            if node._retained is not None and inputs is None:
                retained = node._retained()
                if retained is not None:
                    _accumulate_leaf_grad(retained, gy)
            B = node._device.backend
            if profiler is not None:  # one event per node: its backward and the routing of its gradients
                event = profiler.begin_backward(node, gy)
            if graph is None:
                result = node.backward(node, B, gy)
            else:
                B = graph.backend_for(node._device)
                result = graph.run_node(node, B, gy)
            if type(result) is not tuple:
                result = (result,)
            if node_hooks and node._hooks is not None and node._hooks.post:  # Node.register_hook
                result = _hooks.run_node_post_hooks(node, result, gy, B)
            n_results = len(result)
            if not retain_graph and node._saved:
                node._saved = None  # frees the saved arrays (and lets a private result be taken)
            del gy  # a gy passed straight through is private when nothing but the result holds it
            array_type = B.array_type
            for i, edge, is_node, shape, dtype in node._next:
                g = result[i] if i < n_results else None
                if g is None:
                    continue
                if type(g) is IndexedGrad:
                    private = False
                    if g.value.dtype != dtype:
                        g.value = g.value.astype(dtype)
                else:
                    # A fresh array that nothing else refers to (no view, not gy, not saved, not returned
                    # twice) can become the stored sum, or .grad itself, without a copy (PyTorch's
                    # AccumulateGrad steals such gradients the same way).
                    private = type(g) is array_type and g.base is None and refcount(g) <= _PRIVATE_REFS
                    if g.shape != shape:
                        g, private = B.sum_to_shape(g, shape), True
                    if g.dtype != dtype:
                        g, private = g.astype(dtype), True
                if anomaly:
                    _check_finite(B, getattr(g, "value", g), f"Function '{node.name()}' returned nan or inf "
                                  "values in its gradient; its forward was called at:\n"
                                  + "".join(node._stack or ["(traceback not recorded)\n"]))
                if is_node:
                    if edge in node_grads:
                        _accumulate(node_grads, owned, edge, g, B, private)
                    else:
                        heappush(pending, (-edge._seq, edge))
                        if type(g) is IndexedGrad:
                            _accumulate(node_grads, owned, edge, g, B, private)
                        else:  # its first gradient (inlined _accumulate: the common case)
                            node_grads[edge] = g
                            if private:
                                owned.add(edge)
                elif inputs is None and type(g) is array_type and edge.grad is not None \
                        and (hooked is None or id(edge) not in hooked):
                    # PyTorch's AccumulateGrad: into an existing .grad as each gradient arrives, so a step
                    # after zero_grad(set_to_none=False) holds no second copy of the gradients until the end
                    edge.grad.array += g
                else:
                    _accumulate(leaf_grads, owned, id(edge), g, B, private)
                    leaves[id(edge)] = edge
                    if hooked is not None and id(edge) in hooked:
                        hooked[id(edge)] -= 1
                        if not hooked[id(edge)]:  # its last gradient of this backward
                            _finish_leaf(edge, leaf_grads.pop(id(edge)), id(edge) in owned)
            if event is not None:
                profiler.end_backward(event, result)
                event = None
    finally:
        state.grad_enabled = grad_enabled

    if inputs is None:
        finish = _finish_leaf if _hooks.live[0] else _accumulate_leaf_grad
        for key, g in leaf_grads.items():
            finish(leaves[key], g, key in owned)
        return None
    out = []
    for i, t in enumerate(inputs):
        g = captured.get(i) if t.grad_fn is not None else leaf_grads.get(id(t))
        if g is not None and t.grad_fn is None and _hooks.live[0] and getattr(t, "_hooks", None) is not None:
            g = _hooks.run_pre_hooks(t._hooks, g, t._device)[0]
        if g is None and not allow_unused:
            raise RuntimeError(f"input {i} of autograd.grad was not used in the graph; pass allow_unused=True "
                               "to get None for it")
        out.append(g)
    return out


def _accumulate_leaf_grad(t: Any, g: Any, owned: bool = False) -> None:
    """``t.grad += g``, in place when ``t.grad`` exists (no new array per step). A new ``.grad`` takes g
    itself when the engine owns it (made it, or nothing else refers to it), else a copy: an op's gradient
    may alias an array still in use (an identity backward returns its input), and .grad must own its
    memory."""
    if type(g) is _Rec:
        from .higher_order import accumulate_leaf
        accumulate_leaf(t, g)
    elif t.grad is None:
        B = t._device.backend
        if type(g) is SparseCOO:  # a sparse leaf's gradient is sparse, as PyTorch's
            g = g.map(B.copy)
        elif not owned or type(g) is not B.array_type:  # NumPy 0-d results are scalars: make an array
            g = B.copy(g)
        t.grad = _tensor_mod._wrap(g, t._device)
    elif type(g) is SparseCOO and type(t.grad.array) is not SparseCOO:  # dense .grad + sparse: dense (PyTorch's)
        t.grad.array = t._device.backend.sparse_add_dense(t.grad.array, g)
    else:
        t.grad.array += g
    if _hooks.live[0] and getattr(t, "_hooks", None) is not None:
        for fn in tuple(t._hooks.post.values()):
            fn(t)


def _finish_leaf(t: Any, g: Any, owned: bool = False) -> None:
    """A leaf's gradient of this backward through its hooks into ``.grad`` (the hooked path)."""
    hooks = getattr(t, "_hooks", None)
    if hooks is not None and hooks.pre:
        g, owned = _hooks.run_pre_hooks(hooks, g, t._device)[0], False  # a hook may have kept or returned it
    _accumulate_leaf_grad(t, g, owned)

