"""``torch.func``'s reverse-mode transforms on minitensor's tape: ``grad``, ``grad_and_value``, ``vjp``
and ``jvp``.

Each differentiated input is replaced, for the call, by a fresh alias that requires grad (a view of
the input when it already requires grad, so an outer transform still sees the dependency; a detached
leaf otherwise), and ``autograd.grad`` runs with ``create_graph=True``: the gradient is itself a
differentiable function of the inputs, so ``grad(grad(f))`` is f'' (PINNs' u_xx) and ``jacrev(grad(f))``
a Hessian. Differentiating w.r.t. the alias, not the input itself, keeps nested levels apart: in
``grad(lambda x: x * grad(lambda y: x + y)(x))`` the inner derivative is 1, not 2."""
from __future__ import annotations

import functools
from typing import Any, Callable

from .. import autograd
from ..autograd.engine import pruned_below
from ..autograd.function import _sequence
from ..autograd.grad_mode import enable_grad
from ..creation import zeros_like
from ..tensor import Tensor
from ._pytree import flatten, tree_map, unflatten


def _track(t: Any, fn: str) -> Any:
    if not isinstance(t, Tensor):
        raise ValueError(f"{fn}: Expected the differentiated inputs to be Tensors (or dicts/lists/tuples of "
                         f"Tensors), got {type(t)}")
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True)


def _reaches_outside(t: Any, fresh: set[int], internal: set[Any], since: int = -1) -> bool:
    """Whether t's graph reaches a tensor requiring grad other than this transform's ``fresh`` leaves
    (a closed-over parameter, an outer transform's input); ``internal``: nodes known not to. A node
    numbered below ``since`` (made before the transform's inputs) cannot lead to them: it reaches outside."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node in seen or node in internal:
            continue
        if node._seq < since:
            return True
        seen.add(node)
        for _, edge, is_node, _, _ in node._next:
            if is_node:
                stack.append(edge)
            elif edge is not None and id(edge) not in fresh:
                return True
    internal |= seen
    return False


def _release(tree: Any, fresh: list[Any], since: int = -1) -> Any:
    """The results with their graphs dropped where they depend only on this transform's own leaves: as
    torch.func, ``grad(f)(x)`` of a plain x is a plain tensor, while a gradient that depends on a model's
    parameters (a PINN's u_x) keeps its graph to them."""
    ids, internal = {id(t) for t in fresh}, set()  # type: ignore[var-annotated]

    def one(t: Any) -> Any:
        if isinstance(t, Tensor) and t.grad_fn is not None and not _reaches_outside(t, ids, internal, since):
            return t.detach()
        if isinstance(t, Tensor) and t.grad_fn is None and id(t) in ids:
            return t.detach()  # an output that is the input itself
        return t
    return tree_map(one, tree)


def _argnums(argnums: int | tuple[int, ...], nargs: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums or not all(isinstance(n, int) for n in nums):
        raise RuntimeError(f"{fn}: argnums must be int or Tuple[int, ...], got: {argnums}")
    out = tuple(n + nargs if n < 0 else n for n in nums)
    if any(not 0 <= n < nargs for n in out):
        raise RuntimeError(f"{fn}: Got argnums={argnums} but only {nargs} positional inputs")
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fn}: argnums must be unique, got {argnums}")
    return out


def _track_args(args: tuple[Any, ...], nums: tuple[int, ...],
                fn: str) -> tuple[list[Any], list[Any], list[Any], int]:
    """(args with the chosen ones tracked, their tracked leaves, their specs, a node number below every node
    that uses them: the graph older than it is never walked)."""
    since = next(_sequence)
    new, leaves, specs = list(args), [], []
    for n in nums:
        flat, spec = flatten(args[n])
        tracked = [_track(t, fn) for t in flat]
        new[n] = unflatten(spec, tracked)
        leaves.append(tracked)
        specs.append(spec)
    return new, leaves, specs, since


def _grads(outputs: list[Any], inputs: list[Any], cotangents: list[Any] | None, since: int = -1) -> list[Any]:
    """d(outputs)/d(inputs) with a graph (zeros where an input is unused, as torch.func); ``since``: the
    inputs' ``_track_args`` number (no older node is walked)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs))
             if isinstance(o, Tensor) and o.requires_grad]
    if not pairs or not inputs:
        return [zeros_like(t) for t in inputs]
    with pruned_below(since):
        return list(autograd.grad([o for o, _ in pairs], inputs,
                                  None if cotangents is None else [c for _, c in pairs],
                                  create_graph=True, allow_unused=True, materialize_grads=True))


def _regroup(grads: list[Any], leaves: list[list[Any]], specs: list[Any], single: bool) -> Any:
    out, at = [], 0
    for tracked, spec in zip(leaves, specs):
        out.append(unflatten(spec, grads[at:at + len(tracked)]))
        at += len(tracked)
    return out[0] if single else tuple(out)


def _split_aux(out: Any, has_aux: bool, fn: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, tuple) or len(out) != 2:
        raise RuntimeError(f"{fn}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                           f"if has_aux is True")
    return out


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (d func / d args[argnums], func(*args)) for a func with a 0-d tensor output;
    ``has_aux``: func returns (output, aux) and the value is (output, aux)."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "grad_and_value")
        with enable_grad():  # as torch.func: an outer no_grad does not stop the transform
            new, leaves, specs, since = _track_args(args, nums, "grad_and_value")
            out, aux = _split_aux(func(*new, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   f"instead?")
            grads = _grads([out], [t for ts in leaves for t in ts], None, since)
        result = _regroup(grads, leaves, specs, isinstance(argnums, int))
        result, out, aux = _release((result, out, aux), [t for ts in leaves for t in ts], since)
        return (result, (out, aux)) if has_aux else (result, out)
    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """A function returning d func / d args[argnums] (a tuple for a tuple ``argnums``; the structure of
    the argument for a dict or tuple of tensors), and aux too with ``has_aux``."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, (value_aux) = inner(*args, **kwargs)
        return (g, value_aux[1]) if has_aux else g
    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) is v^T J for v shaped as the output, a tuple
    with one entry per primal; it can be called again (the graph is kept)."""
    nums = tuple(range(len(primals)))
    with enable_grad():
        new, leaves, specs, since = _track_args(primals, nums, "vjp")
        out, aux = _split_aux(func(*new), has_aux, "vjp")
    out_leaves, out_spec = flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has only Tensors as outputs, "
                               f"got {type(o)}")

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cots, cot_spec = flatten(cotangents)
        if len(cots) != len(out_leaves) or (len(cots) > 1 and cot_spec != out_spec):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               "outputs to the function")
        for o, c in zip(out_leaves, cots):
            if not isinstance(c, Tensor) or c.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output has a shape of "
                                   f"{tuple(getattr(c, 'shape', ()))} and output has a shape of {tuple(o.shape)}")
        with enable_grad():
            grads = _grads(out_leaves, [t for ts in leaves for t in ts], cots, since)
        return _release(_regroup(grads, leaves, specs, False), [t for ts in leaves for t in ts], since)
    out_r, aux = _release((out, aux), [t for ts in leaves for t in ts], since)
    return (out_r, vjp_fn, aux) if has_aux else (out_r, vjp_fn)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """(func(*primals), J @ tangents[, aux]) by the double-vjp trick: g(u) = J^T u is linear in a dummy
    cotangent u, so d<g(u), t>/du = J t (two reverse passes; no forward mode here)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same length")
    with enable_grad():
        new, leaves, specs, since = _track_args(primals, tuple(range(len(primals))), "jvp")
        out, aux = _split_aux(func(*new), has_aux, "jvp")
        outs, out_spec = flatten(out)
        dummies = [zeros_like(o).requires_grad_(True) for o in outs]
        flat_in = [t for ts in leaves for t in ts]
        g = _grads(outs, flat_in, dummies, since)
        tans = [t for tan in tangents for t in flatten(tan)[0]]
        if any(not isinstance(t, Tensor) or t.shape != p.shape for t, p in zip(tans, flat_in)) \
                or len(tans) != len(flat_in):
            raise RuntimeError("jvp(f, primals, tangents): Expected the tangents to have the shapes of the primals")
        jv = _grads(g, dummies, tans, since)  # (the g that do not require grad drop out there; none: zeros)
    result = _release((out, unflatten(out_spec, list(jv))), flat_in + dummies, since)
    aux = _release(aux, flat_in, since)
    return (*result, aux) if has_aux else result
