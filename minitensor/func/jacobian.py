"""``torch.func.jacrev``, ``jacfwd`` and ``hessian``: Jacobians from vector-Jacobian products.

For each output, the rows of J are ``vjp_fn`` applied to the rows of an identity cotangent, run through
``vmap`` (so a batching vmap would make this one batched backward pass; with today's loop it is one
backward pass per output element). ``jacfwd`` returns the same matrix (there is no forward mode: it is
computed as ``jacrev``); ``hessian`` is ``jacfwd(jacrev(f))``, which works because every pass keeps its
graph (create_graph)."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..creation import eye
from ..tensor import Tensor
from ._pytree import flatten, unflatten
from .grad import _argnums, _grads, _release, _split_aux, _track_args
from .vmap import _check_randomness, vmap


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """A function returning d func / d args[argnums]: for an output of shape S and an input of shape T,
    a tensor of shape S + T (nested like the outputs, then like the inputs)."""
    from ..autograd.grad_mode import enable_grad

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "jacrev")
        with enable_grad():
            new, leaves, specs, since = _track_args(args, nums, "jacrev")
            out, aux = _split_aux(func(*new, **kwargs), has_aux, "jacrev")
            outs, out_spec = flatten(out)
            flat_in = [t for ts in leaves for t in ts]
            per_output = []
            for o in outs:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"jacrev(f, ...)(*args): expected f(*args) to return only tensors, got "
                                       f"unsupported type {type(o)}")
                n = o.numel()
                basis = eye(n, dtype=o.dtype, device=o.device).reshape(n, *o.shape)

                def rows(v: Any, o: Any = o) -> tuple[Any, ...]:
                    return tuple(_grads([o], flat_in, [v], since))
                jac_rows = vmap(rows)(basis) if n else tuple(x.new_zeros((0, *x.shape)) for x in flat_in)
                jac = [r.reshape(*o.shape, *x.shape) for r, x in zip(jac_rows, flat_in)]
                grouped, at = [], 0
                for tracked, spec in zip(leaves, specs):
                    grouped.append(unflatten(spec, jac[at:at + len(tracked)]))
                    at += len(tracked)
                per_output.append(grouped[0] if isinstance(argnums, int) else tuple(grouped))
        result, aux = _release((unflatten(out_spec, per_output), aux), flat_in, since)
        return (result, aux) if has_aux else result
    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian as ``jacrev`` computes it (same shape and values as PyTorch's forward-mode jacfwd)."""
    _check_randomness(randomness)
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """d^2 func / d args[argnums]^2 for a 0-d output: shape T + T for an input of shape T."""
    return jacfwd(jacrev(func, argnums), argnums)
