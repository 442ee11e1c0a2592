"""``torch.autograd.forward_ad``: dual tensors (a primal and its tangent) inside a ``dual_level``.

minitensor has no forward-mode rules per op. A dual tensor is a tensor that requires grad and is registered
with its tangent in the current level; the ops on it record the usual reverse-mode graph, and
``unpack_dual(y)`` computes y's tangent from that graph by the double-vjp identity, as ``func.jvp`` does:
g(u) = J^T u is linear in a dummy cotangent u, so d<g(u), t>/du = J t, exact (two reverse passes over the
graph between y and the dual tensors it depends on, each time it is asked). A custom Function with a ``jvp``
staticmethod gives its outputs' tangents itself (``function_jvp``); they start the graph walk as a dual's do.
What this does and does not support is in docs/differences.md ("Forward-mode AD").
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .grad_mode import enable_grad
from ..tensor import Tensor

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and its tangent (None when it has none at this level)."""
    primal: Tensor
    tangent: Tensor | None


class _Level:
    """The dual tensors made in one level, each with its tangent: the hidden leaf behind a dual whose primal
    needs no gradient, by id (kept alive so that its id is not reused while the level lasts), and a dual
    that is a view of a primal that requires grad, by its node."""

    def __init__(self) -> None:
        self.leaves: dict[int, tuple[Tensor, Tensor]] = {}
        self.nodes: dict[Any, tuple[Tensor, Tensor]] = {}
        self.entries: dict[Any, Tensor] = {}  # the node of each copy of a leaf dual: its tangent, as it is
        # the node of each output of a custom Function whose jvp gave its tangent: (output, tangent, whether a
        # tensor that requires grad for its own sake reaches it)
        self.functions: dict[Any, tuple[Tensor, Tensor, bool]] = {}


_levels: list[_Level] = []  # at most one: nested levels are refused, as PyTorch's


def enter_dual_level() -> int:
    """Start a level of forward AD and return it (0: there is only one)."""
    if _levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _levels.append(_Level())
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """End the level: the dual tensors made in it lose their tangents."""
    _check_level(level)
    if not _levels:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _levels.pop()


class dual_level:
    """``with dual_level():`` the scope in which ``make_dual`` tensors carry tangents."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _check_level(level: int | None) -> None:
    if level not in (None, 0):
        raise RuntimeError(f"Invalid forward AD level {level}: minitensor has a single level (0)")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with ``tensor``'s values (its memory) and ``tangent`` as its forward gradient. It keeps
    ``tensor``'s reverse-mode graph when ``tensor`` requires grad. A tangent with the primal's dtype, device
    and strides is kept itself, even one that requires grad (``unpack_dual(dual).tangent is tangent``, as
    PyTorch's); another is copied (PyTorch keeps one of another dtype too: here it takes the primal's)."""
    _check_level(level)
    if not _levels:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                           "original Tensor, this is not supported. Tensor is of size "
                           f"{list(tensor.shape)} while the given forward gradient is of size {list(tangent.shape)}.")
    if tangent.dtype != tensor.dtype or tangent.device != tensor.device or tangent.stride() != tensor.stride():
        tangent = tangent.detach().to(device=tensor.device, dtype=tensor.dtype)  # else kept itself, as PyTorch's
    lvl = _levels[-1]
    with enable_grad():
        if tensor.requires_grad:  # a view: reverse-mode gradients still flow to the primal's graph
            dual = tensor.view_as(tensor)
            lvl.nodes[dual.grad_fn] = (dual, tangent)
        else:  # a copy of a hidden leaf, not the leaf itself, so that in-place ops on the dual are recorded
            leaf = tensor.detach().requires_grad_(True)
            lvl.leaves[id(leaf)] = (leaf, tangent)
            dual = leaf.clone()
            lvl.entries[dual.grad_fn] = tangent
    return dual


def _duals(t: Tensor, lvl: _Level) -> tuple[list[Tensor], list[Tensor], bool]:
    """The dual tensors ``t`` depends on (as autograd.grad inputs), their tangents, and whether ``t`` also
    depends on a tensor that requires grad for its own sake (its primal then keeps the graph)."""
    inputs: list[Tensor] = []
    tangents: list[Tensor] = []
    user = False
    seen: set[int] = set()
    stack = [t.grad_fn]
    while stack:
        node = stack.pop()
        for _, edge, is_node, _, _ in node._next:
            if id(edge) in seen:
                continue
            seen.add(id(edge))
            if is_node:
                if edge in lvl.nodes:  # a dual whose primal requires grad: its tangent starts here
                    inputs.append(lvl.nodes[edge][0])
                    tangents.append(lvl.nodes[edge][1])
                    user = True
                elif edge in lvl.functions:  # a custom Function's output: its jvp gave the tangent
                    out, tangent, by_user = lvl.functions[edge]
                    inputs.append(out)
                    tangents.append(tangent)
                    user = user or by_user
                else:
                    stack.append(edge)
            elif id(edge) in lvl.leaves and lvl.leaves[id(edge)][0] is edge:
                inputs.append(edge)
                tangents.append(lvl.leaves[id(edge)][1])
            else:
                user = True
    return inputs, tangents, user


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of ``tensor`` at the current level; the tangent is None when it has none."""
    _check_level(level)
    if not _levels or not isinstance(tensor, Tensor) or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    lvl = _levels[-1]
    if tensor.grad_fn is None:  # a leaf of the user's (the leaves behind duals are hidden)
        return UnpackedDualTensor(tensor, None)
    if tensor.grad_fn in lvl.nodes:
        return UnpackedDualTensor(tensor, lvl.nodes[tensor.grad_fn][1])
    if tensor.grad_fn in lvl.entries:  # a dual itself (no in-place op since): its tangent as given
        return UnpackedDualTensor(tensor.detach(), lvl.entries[tensor.grad_fn])
    if tensor.grad_fn in lvl.functions:
        _, tangent, by_user = lvl.functions[tensor.grad_fn]
        return UnpackedDualTensor(tensor if by_user else tensor.detach(), tangent)
    inputs, tangents, user = _duals(tensor, lvl)
    primal = tensor if user else tensor.detach()
    if not inputs or not (tensor.is_floating_point() or tensor.is_complex()):
        return UnpackedDualTensor(primal, None)
    from .. import creation
    from . import grad
    try:
        with enable_grad():
            u = creation.zeros_like(tensor).requires_grad_(True)
            gs = grad(tensor, inputs, u, create_graph=True, allow_unused=True)
            keep = [(g, v) for g, v in zip(gs, tangents) if g is not None and g.requires_grad]
            if not keep:  # the output does not depend on the duals (or only through non-differentiable ops)
                return UnpackedDualTensor(primal, creation.zeros_like(primal))
            jv, = grad([g for g, _ in keep], u, [v for _, v in keep], allow_unused=True, materialize_grads=True)
    except NotImplementedError as e:  # an op without a (double) backward; a Function with only jvp
        raise NotImplementedError(f"forward_ad: minitensor computes tangents from the reverse-mode graph (two "
                                  f"backward passes; a custom Function's jvp is not used), which failed: {e}") from e
    return UnpackedDualTensor(primal, jv.detach())


def function_jvp(cls: Any, ctx: Any, args: tuple[Any, ...], outs: list[Any]) -> None:
    """After a custom Function's forward inside a level: when an input carries a tangent, the outputs' tangents
    are ``cls.jvp(ctx, *input tangents)``, as PyTorch's (a tensor input without one gets zeros, any other
    argument None), and the outputs are registered with them (their primal keeps its reverse-mode graph)."""
    lvl = _levels[-1]
    tangents: list[Any] = []
    by_user = False
    for a in args:
        if not isinstance(a, Tensor):
            tangents.append(None)
            continue
        primal, tangent = unpack_dual(a)
        by_user = by_user or (a.requires_grad and primal is a)  # the primal is kept, not detached: a user's graph
        tangents.append(tangent)
    if all(t is None for t in tangents):
        return
    from .. import creation
    tangents = [creation.zeros_like(a) if t is None and isinstance(a, Tensor) else t
                for a, t in zip(args, tangents)]
    from .grad_mode import no_grad
    with no_grad():
        result = cls.jvp(ctx, *tangents)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(results) != len(outs):
        raise RuntimeError(f"jvp() returned {len(results)} tangents but forward() returned {len(outs)} outputs")
    for o, t in zip(outs, results):
        if isinstance(o, Tensor) and o.grad_fn is not None and isinstance(t, Tensor):
            if tuple(t.shape) != tuple(o.shape):
                raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the "
                                   f"original Tensor, this is not supported. Tensor is of size {list(o.shape)} "
                                   f"while the given forward gradient is of size {list(t.shape)}.")
            lvl.functions[o.grad_fn] = (o, t, by_user)
