"""``minitensor.autograd.functional``: PyTorch's ``jacobian`` and ``vjp`` on top of ``autograd.grad``.

Both run ``func`` on detached copies of the inputs that require grad, so the caller's graph is untouched.
``vjp`` is one backward pass: v^T J. ``jacobian`` is one backward pass per output element (J's rows, the
reverse-mode strategy PyTorch uses without ``vectorize``), stacked into shape output.shape + input.shape.
No higher-order gradients: ``create_graph=True`` raises (docs/differences.md).
"""
from __future__ import annotations

from typing import Any, Callable

from . import grad
from .grad_mode import enable_grad

__all__ = ["jacobian", "vjp"]


def _as_tuple(x: Any, what: str, fn: str) -> tuple[tuple[Any, ...], bool]:
    """``x`` as a tuple of tensors, and whether it was a tuple; PyTorch's TypeError otherwise."""
    from ..tensor import Tensor
    items = x if isinstance(x, tuple) else (x,)
    if not all(isinstance(t, Tensor) for t in items):
        raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the given {what} "
                        f"has type {type(x)}.")
    return items, isinstance(x, tuple)


def _prepare(func: Callable[..., Any], inputs: Any, fn: str, create_graph: bool, strict: bool) -> tuple[Any, ...]:
    """(inputs, was a tuple, outputs, was a tuple): func run with grad on detached inputs; ``strict``: every
    output must have been computed differentiably."""
    if create_graph:
        raise NotImplementedError(f"{fn}(create_graph=True): minitensor has no higher-order gradients "
                                  "(backward passes run on raw arrays)")
    ins, tuple_in = _as_tuple(inputs, "inputs", fn)
    ins = tuple(t.detach().requires_grad_(True) for t in ins)
    with enable_grad():
        out = func(*ins)
    outs, tuple_out = _as_tuple(out, "outputs of the user-provided function", fn)
    for k, o in enumerate(outs):
        if strict and not o.requires_grad:
            raise RuntimeError(f"Output {k} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")
    return ins, tuple_in, outs, tuple_out


def _grads(outs: list[Any], ins: tuple[Any, ...], seeds: Any, strict: bool, independent: str,
           retain_graph: bool) -> tuple[Any, ...]:
    """d(sum of seed . out)/d(each input), zeros where an input is unused (``strict``: the RuntimeError
    ``independent`` names, formatted with the input's place j)."""
    from ..creation import zeros_like
    gs = grad(outs, ins, grad_outputs=seeds, retain_graph=retain_graph, allow_unused=True) if outs \
        else (None,) * len(ins)
    for j, g in enumerate(gs):
        if g is None and strict:
            raise RuntimeError(independent.format(j=j) + " This is not allowed in strict mode.")
    return tuple(zeros_like(t) if g is None else g for t, g in zip(ins, gs))


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J): the outputs (detached) and the gradient of sum(v * outputs) w.r.t. each input.
    ``v`` may be None only for one output of one element."""
    ins, tuple_in, outs, tuple_out = _prepare(func, inputs, "vjp", create_graph, strict)
    if v is None:
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
        vs: tuple[Any, ...] = (None,)
    else:
        vs, _ = _as_tuple(v, "v", "vjp")
        if len(vs) != len(outs):
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(outs)} but got {len(vs)}.")
        for k, (o, w) in enumerate(zip(outs, vs)):
            if w.shape != o.shape:
                name = f"Entry {k} in v" if len(outs) > 1 else "v"
                raise RuntimeError(f"{name} has invalid size: should be {o.shape} but got {w.shape}.")
    live = [(o, w) for o, w in zip(outs, vs) if o.requires_grad]
    result = _grads([o for o, _ in live], ins, None if v is None else [w for _, w in live], strict,
                    "The output of the user-provided function is independent of input {j}.", False)
    detached = tuple(o.detach() for o in outs)
    return (detached if tuple_out else detached[0]), (result if tuple_in else result[0])


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """d func(inputs) / d inputs: for output i and input j a tensor of shape out_i.shape + in_j.shape; a
    tensor, a tuple over inputs or outputs, or a tuple (outputs) of tuples (inputs), as the arguments were.
    ``vectorize`` gives the same result (computed row by row: there is no vmap)."""
    from ..creation import zeros
    from ..functional import stack
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        raise NotImplementedError("jacobian(strategy='forward-mode'): minitensor has no forward-mode AD")
    ins, tuple_in, outs, tuple_out = _prepare(func, inputs, "jacobian", create_graph, strict)
    table = []
    for i, out in enumerate(outs):
        n = out.numel()
        independent = f"Output {i} of the user-provided function is independent of input {{j}}."
        rows: list[list[Any]] = [[] for _ in ins]
        for k in range(n):  # one backward per output element: a one-hot seed picks J's row k
            seed = zeros(n, dtype=out.dtype, device=out.device)
            seed[k] = 1
            live = [out] if out.requires_grad else []
            for j, g in enumerate(_grads(live, ins, [seed.reshape(tuple(out.shape))] if live else None, strict,
                                         independent, True)):
                rows[j].append(g)
        table.append(tuple(
            (stack(r) if r else zeros(0, *t.shape, dtype=t.dtype, device=t.device)).reshape(
                tuple(out.shape) + tuple(t.shape)) for r, t in zip(rows, ins)))
    per_out = [row if tuple_in else row[0] for row in table]
    return tuple(per_out) if tuple_out else per_out[0]
