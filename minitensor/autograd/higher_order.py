"""``create_graph=True``: the engine's side of higher-order gradients (docs/architecture.md, "Higher-order
gradients").

The engine runs each node's own backward with the recording backend (recording_backend.py) and the node's
gradient as a ``Rec`` facade, after presenting its saved arrays as facades too (``present``):

- an array that is an input's memory is that input: a tensor on the array with the input's grad_fn (or the
  leaf itself), so second derivatives flow into the inputs;
- the output's memory is the output: a tensor with this node as grad_fn;
- an array the forward computed (neither) is what the op's ``derived_saves`` says: a constant (None), or
  what its function rebuilds with a graph (``kept_output``: the output with its reduced dims kept;
  ``function_output``: a Function's output, ``log_softmax`` inside cross_entropy; ``pinned``: a
  recomputation from the other saved arrays); any other computed float array is ``Underivable``;
- integer and boolean arrays, and plain ctx attributes, are constants.

Nothing here runs, or is imported, while no backward asks for ``create_graph``.
"""
from __future__ import annotations

from typing import Any

from . import engine as _engine
from .function import ArrayFunction, _new, _sequence
from .custom_function import FunctionCtx
from .recording import Rec
from .saved_hooks import Packed
from .recording_backend import RecordingBackend, Underivable, set_current_node
from ..tensor import Tensor, _wrap

__all__ = ["backend_for", "run_node", "seed", "accumulate_leaf", "kept_output", "function_output", "pinned"]

_backends: dict[Any, RecordingBackend] = {}


def backend_for(device: Any) -> RecordingBackend:
    B = _backends.get(device)
    if B is None or B.real is not device.backend:  # a test may lend the device another backend
        B = _backends[device] = RecordingBackend(device)
    return B


def run_node(node: ArrayFunction, B: RecordingBackend, gy: Any) -> Any:
    """``node``'s backward, recorded: its saved arrays presented as facades for the call."""
    saved = node._saved
    if saved:
        arrays = saved.unpack() if type(saved) is Packed else saved  # saved under saved_tensors_hooks
        node._saved = present(node, arrays, getattr(gy, "shape", ()))
    previous = set_current_node(node)
    try:
        return node.backward(node, B, gy)
    finally:
        node._saved = saved
        set_current_node(previous)


def _tensor(array: Any, device: Any, grad_fn: Any) -> Tensor:
    t = _wrap(array, device, requires_grad=True)
    t.grad_fn = grad_fn
    return t


def underivable_node(node: ArrayFunction, message: str) -> ArrayFunction:
    """An ``Underivable`` node with ``node``'s edges, made by hand: no arrays to pass through apply."""
    u: Any = _new(Underivable)
    u.message, u.needs_input_grad = message, node.needs_input_grad
    u._next, u._seq, u._device = node._next, next(_sequence), node._device
    return u


def present(node: ArrayFunction, saved: tuple[Any, ...], out_shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The saved arrays of ``node`` (whose output has ``out_shape``) as its backward sees them under
    create_graph (see the module)."""
    if isinstance(node, FunctionCtx):
        return _present_custom(node, saved)
    device = node._device
    linked: dict[int, Any] = {}
    inputs: set[int] = set()
    for _, _, j, owner in node._versions:
        s = saved[j]
        inputs.add(j)
        if owner == "output":
            linked[j] = Rec(_tensor(s, node.out_device or device, node))
        elif owner is not None:
            linked[j] = Rec(_tensor(s, device, owner))
        else:
            leaf = next((e for _, e, is_node, _, _ in node._next if not is_node and e.array is s), None)
            if leaf is not None:
                linked[j] = Rec(leaf)
    derived = type(node).derived_saves
    out: list[Any] = []
    later = []
    for j, s in enumerate(saved):
        if j in linked:
            out.append(linked[j])
        elif j in inputs or s is None or getattr(getattr(s, "dtype", None), "kind", "i") not in "fcV":
            out.append(s)  # an input without grad, a number, an integer or boolean array: a constant
        else:
            out.append(s)
            later.append(j)
    for j in later:  # after the inputs: a derivation may build on them
        how = derived.get(j, _UNDERIVABLE)
        r = None if how is _UNDERIVABLE else saved[j] if how is None else how(node, out, saved[j], out_shape)
        out[j] = Rec(_tensor(saved[j], device, underivable_node(node, _computed_message(node)))) if r is None else r
    return tuple(out)


_UNDERIVABLE = object()


def pinned(r: Rec, value: Any) -> Rec:
    """``r``'s derivatives with the value ``value`` (the saved array it recomputes, bit for bit)."""
    return (r - r.t.array) + value


def kept_output(node: ArrayFunction, saved: list[Any], s: Any, out_shape: tuple[int, ...]) -> Rec:
    """A saved array holding the output's values with its reduced dims kept (logsumexp, norms): the output."""
    return Rec(_tensor(s.reshape(out_shape), node._device, node)).reshape(s.shape)


def function_output(node: ArrayFunction, s: Any, position: int, cls: type[ArrayFunction],
                    attributes: dict[str, Any]) -> Any:
    """A saved array that is the output of the Function ``cls`` (ctx ``attributes``) of input ``position``,
    whose backward reads only that output (log_softmax inside cross_entropy): that Function's node."""
    edge = next(((0, *rest) for i, *rest in node._next if i == position), None)
    if edge is None:  # that input has no gradient: a constant
        return s
    ctx: Any = _new(cls)
    for name, value in attributes.items():
        setattr(ctx, name, value)
    ctx.needs_input_grad, ctx._next, ctx._seq, ctx._device = (True,), [edge], next(_sequence), node._device
    ctx._saved = (s,)
    ctx._versions = [([0], 0, 0, "output")]  # its saved array is its output: linked again at third order
    return Rec(_tensor(s, node._device, ctx))


def _computed_message(node: ArrayFunction) -> str:
    return (f"double backward of {type(node).__name__} is not implemented: its backward reads an array its "
            "forward computed, with no recorded link to the inputs")


def _present_custom(node: Any, saved: tuple[Any, ...]) -> tuple[Any, ...]:
    """A custom Function's saved tensors: inputs are themselves already; a saved output gets this node as
    grad_fn (a multi-output Function's: a new slot of that output, whose gradient reaches this node as that
    output's part; a non-differentiable output stays a constant)."""
    from .custom_function import make_slot
    out = list(saved)
    for _, _, j, owner in node._versions:
        if owner == "output":
            t = saved[j]
            if len(node._diff) == 1:
                out[j] = _tensor(t.array, t._device, node)
            elif node._saved_outputs.get(j) in node._diff:
                out[j] = _tensor(t.array, t._device, make_slot(node, node._diff.index(node._saved_outputs[j])))
    return tuple(out)


def seed(t: Tensor, g: Any) -> Rec:
    """The gradient to start from at ``t``: ``g`` (a tensor, maybe with a graph of its own) or ones."""
    if g is None:
        return Rec(_wrap(t._device.backend.ones(t.shape, t.array.dtype), t._device))
    return Rec(g)


def accumulate_leaf(t: Tensor, g: Rec) -> None:
    """PyTorch's AccumulateGrad under create_graph: ``.grad`` becomes a differentiable copy of the gradient,
    or ``.grad + g`` out of place."""
    from ..functional import clone
    t.grad = clone(g.t) if t.grad is None else t.grad + g.t


_engine._Rec = Rec
