"""``minitensor.autograd.functional``: PyTorch's ``jacobian``, ``vjp``, ``jvp``, ``hessian``, ``hvp`` and ``vhp``
on top of ``autograd.grad``.

Each runs ``func`` on the inputs made leaves of a graph of its own (detached copies that require grad; with
``create_graph`` an input that requires grad stays linked to its graph through a view, as PyTorch's), so
the caller's graph is untouched. ``vjp`` is one backward pass: v^T J. ``jacobian`` is one backward pass per
output element (J's rows, the reverse-mode strategy PyTorch uses without ``vectorize``), stacked into shape
output.shape + input.shape. ``jvp`` and ``hvp`` use the double-vjp trick (J v is the gradient w.r.t. u of
u^T J v... taken through a backward pass recorded with ``create_graph``), ``hessian`` the jacobian of the
gradient, ``vhp`` the gradient of (gradient . v). With ``create_graph`` the results keep their graphs.
"""
from __future__ import annotations

from typing import Any, Callable

from . import grad
from .grad_mode import enable_grad

__all__ = ["jacobian", "vjp", "jvp", "hessian", "hvp", "vhp"]


def _as_tuple(x: Any, what: str, fn: str) -> tuple[tuple[Any, ...], bool]:
    """``x`` as a tuple of tensors, and whether it was a tuple; PyTorch's TypeError otherwise."""
    from ..tensor import Tensor
    items = x if isinstance(x, tuple) else (x,)
    if not all(isinstance(t, Tensor) for t in items):
        raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the given {what} "
                        f"has type {type(x)}.")
    return items, isinstance(x, tuple)


def _leaves(ins: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    """The inputs as the roots of ``func``'s graph: linked to their own graph with ``create_graph``."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(True) for t in ins)


def _prepare(func: Callable[..., Any], inputs: Any, fn: str, create_graph: bool, strict: bool) -> tuple[Any, ...]:
    """(inputs, was a tuple, outputs, was a tuple): func run with grad on detached inputs; ``strict``: every
    output must have been computed differentiably."""
    ins, tuple_in = _as_tuple(inputs, "inputs", fn)
    ins = _leaves(ins, create_graph)
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
           retain_graph: bool, create_graph: bool = False) -> tuple[Any, ...]:
    """d(sum of seed . out)/d(each input), zeros where an input is unused (``strict``: the RuntimeError
    ``independent`` names, formatted with the input's place j)."""
    from ..creation import zeros_like
    gs = grad(outs, ins, grad_outputs=seeds, retain_graph=retain_graph or create_graph, create_graph=create_graph,
              allow_unused=True) if outs else (None,) * len(ins)
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
                    "The output of the user-provided function is independent of input {j}.", False, create_graph)
    return _out(outs, tuple_out, create_graph), _post(result, tuple_in, create_graph)


def _out(outs: tuple[Any, ...], tuple_out: bool, create_graph: bool) -> Any:
    """The function's outputs as returned: detached unless ``create_graph``."""
    kept = outs if create_graph else tuple(o.detach() for o in outs)
    return kept if tuple_out else kept[0]


def _post(result: tuple[Any, ...], tuple_in: bool, create_graph: bool) -> Any:
    kept = result if create_graph else tuple(g.detach() for g in result)
    return kept if tuple_in else kept[0]


def _vector(v: Any, like: tuple[Any, ...], fn: str, what: str = "inputs") -> tuple[Any, ...]:
    """``v`` as a tuple matching ``like`` in length and shapes (PyTorch's errors); None only for one
    single-element tensor."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} to the user-provided function is a "
                               "single Tensor with a single element.")
        from ..creation import ones_like
        return (ones_like(like[0]),)
    vs, _ = _as_tuple(v, "v", fn)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for k, (t, w) in enumerate(zip(like, vs)):
        if w.shape != t.shape:
            name = f"Entry {k} in v" if len(like) > 1 else "v"
            raise RuntimeError(f"{name} has invalid size: should be {t.shape} but got {w.shape}.")
    return vs


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v) by the double-vjp trick: g(u) = J^T u is linear in u, and J v = d(g(u) . v)/du."""
    from ..creation import zeros_like
    ins, tuple_in, outs, tuple_out = _prepare(func, inputs, "jvp", create_graph, strict)
    vs = _vector(v, ins, "jvp")
    live = [o for o in outs if o.requires_grad]
    us = [zeros_like(o).requires_grad_(True) for o in live]
    with enable_grad():
        gs = grad(live, ins, grad_outputs=us, create_graph=True, allow_unused=True) if live else (None,) * len(ins)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None and g.requires_grad]
        back = grad([g for g, _ in pairs], us, grad_outputs=[w for _, w in pairs], create_graph=create_graph,
                    allow_unused=True) if pairs else (None,) * len(us)
    it = iter(back)
    result = tuple(next(it) if o.requires_grad else None for o in outs)
    for k, r in enumerate(result):
        if r is None and strict:
            raise RuntimeError(f"The output of the user-provided function is independent of input {k}. This is "
                               "not allowed in strict mode.")
    result = tuple(zeros_like(o) if r is None else r for o, r in zip(outs, result))
    return _out(outs, tuple_out, create_graph), _post(result, tuple_out, create_graph)


def _scalar_function(func: Callable[..., Any], fn: str) -> Callable[..., Any]:
    """``func`` checked to return one tensor of one element (hessian, vhp, hvp)."""
    def single(*args: Any) -> Any:
        out = func(*args)
        outs, tuple_out = _as_tuple(out, "outputs of the user-provided function", fn)
        if tuple_out or outs[0].numel() != 1:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor with a single element"
                               if not tuple_out else f"The function given to {fn} should return a single Tensor")
        return outs[0]
    return single


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H): the gradient of (grad func . v), H the Hessian of a scalar ``func``."""
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v); H is symmetric for a twice differentiable ``func``, so this is v^T H's transpose,
    computed the same way."""
    return _second_order(func, inputs, v, create_graph, strict, "hvp")


def _second_order(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool,
                  fn: str) -> tuple[Any, Any]:
    from ..creation import zeros_like
    ins, tuple_in, outs, _ = _prepare(_scalar_function(func, fn), inputs, fn, create_graph, strict)
    vs = _vector(v, ins, fn)
    out = outs[0]
    with enable_grad():
        gs = grad(out, ins, create_graph=True, allow_unused=True) if out.requires_grad else (None,) * len(ins)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None and g.requires_grad]
        if strict and len(pairs) < len(ins):
            raise RuntimeError("The jacobian of the user-provided function is independent of an input. This is "
                               "not allowed in strict mode.")
        back = grad([g for g, _ in pairs], ins, grad_outputs=[w for _, w in pairs], create_graph=create_graph,
                    allow_unused=True) if pairs else (None,) * len(ins)
    result = tuple(zeros_like(t) if r is None else r for t, r in zip(ins, back))
    return _out(outs, False, create_graph), _post(result, tuple_in, create_graph)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func``: the jacobian of its gradient, shape in_i.shape + in_j.shape per pair
    of inputs (a tensor for one input, a tuple of tuples for several)."""
    if outer_jacobian_strategy == "forward-mode":
        raise NotImplementedError("hessian(outer_jacobian_strategy='forward-mode'): minitensor has no forward-mode "
                                  "AD")
    single = _scalar_function(func, "hessian")
    ins, tuple_in = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args: Any) -> Any:
        g = jacobian(single, args, create_graph=True, strict=strict)
        return g if tuple_in else g[0]
    return jacobian(gradient, inputs, create_graph=create_graph, strict=strict)


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
                                         independent, True, create_graph)):
                rows[j].append(g if create_graph else g.detach())
        table.append(tuple(
            (stack(r) if r else zeros(0, *t.shape, dtype=t.dtype, device=t.device)).reshape(
                tuple(out.shape) + tuple(t.shape)) for r, t in zip(rows, ins)))
    per_out = [row if tuple_in else row[0] for row in table]
    return tuple(per_out) if tuple_out else per_out[0]
