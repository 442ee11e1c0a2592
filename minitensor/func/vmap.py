"""``torch.func.vmap``: map a per-sample function over a batch dimension.

PyTorch batches each op by a rule (a batch dimension carried through the kernels). Here the batch is
run by ``_run_batch``, a loop over the batch items that calls ``func`` on each slice and stacks the
results: correct for every function (reductions over all dims, reshapes with explicit sizes, 1-d
``matmul``, ``grad`` inside, data-dependent control flow), at the cost of B calls of ``func`` instead
of one (docs/differences.md). Slicing is ``select`` and joining ``stack``, both differentiable, so
``vmap(grad(f))`` and gradients through ``vmap`` work. A batching-rule engine would replace only
``_run_batch``."""
from __future__ import annotations

import functools
from typing import Any, Callable

from .. import random as _random
from ..functional import stack
from ..tensor import Tensor
from ._pytree import broadcast_prefix, flatten, unflatten


def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")


def _run_batch(func: Callable[..., Any], spec: Any, leaves: list[Any], dims: list[int | None], size: int,
               kwargs: dict[str, Any], randomness: str) -> list[Any]:
    """func on each of the ``size`` slices (leaf i sliced along dims[i]); the list of its outputs."""
    state = _random.get_rng_state() if randomness != "different" else None
    outs = []
    for b in range(size):
        if randomness == "same":
            _random.set_rng_state(state)  # each item draws the same numbers
        args = unflatten(spec, [x if d is None else x.select(d, b) for x, d in zip(leaves, dims)])
        outs.append(func(*args, **kwargs))
    if randomness == "error" and not _random.get_rng_state().equal(state):
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                           "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                           "operation out of vmap")
    return outs


def _stack_outputs(outs: list[Any], out_dims: Any) -> Any:
    flats = [flatten(o) for o in outs]
    leaves0, spec = flats[0]
    dims = broadcast_prefix(out_dims, outs[0], "vmap: out_dims")
    result = []
    for i, d in enumerate(dims):
        items = [f[0][i] for f in flats]
        if not isinstance(items[0], Tensor):
            raise ValueError(f"vmap: `func` must only return Tensors, got type {type(items[0])}. Did you mean to "
                             f"set out_dims= to None for output?")
        if d is None:
            result.append(items[0])  # unbatched output: as PyTorch, it must not depend on the batch
            continue
        nd = items[0].dim() + 1
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
        result.append(stack(items, d))
    return unflatten(spec, result)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """A function that maps ``func`` over dimension ``in_dims`` of its positional inputs (an int or None per
    input, or one for all; nested like the inputs for dicts/tuples of tensors) and stacks the results at
    ``out_dims``. ``randomness``: 'error' (raise if func draws random numbers), 'different', 'same'.
    ``chunk_size`` is accepted (the loop already runs one item at a time)."""
    _check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"vmap(func, in_dims={in_dims}, ...): expected `in_dims` to be int or a (potentially "
                         f"nested) tuple matching the structure of inputs, got: {type(in_dims)}.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise ValueError("vmap(f)(): got no inputs. Maybe you forgot to add inputs, or you are trying to "
                             "vmap over a function with no inputs. The latter is unsupported.")
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure of length {len(in_dims)} but inputs "
                             f"has length {len(args)}.")
        leaves, spec = flatten(args)
        dims = broadcast_prefix(in_dims, args, "vmap: in_dims")
        sizes: list[int] = []
        norm: list[int | None] = []
        for x, d in zip(leaves, dims):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(d, int):
                raise ValueError(f"vmap: in_dims must be ints or None, got {d!r}")
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                                 f"cannot vmap over non-Tensor arguments, please use None as the respective "
                                 f"in_dim")
            if not -x.dim() <= d < max(x.dim(), 1) or x.dim() == 0:
                raise ValueError(f"vmap: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {x.dim()} so expected in_dim to satisfy "
                                 f"-{x.dim()} <= in_dim < {x.dim()}.")
            norm.append(d % x.dim())
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError("vmap: at least one input must be mapped over (got in_dims=None for all inputs)")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                             f"sizes {sizes} for the mapped dimension")
        outs = _run_batch(func, spec, leaves, norm, sizes[0], kwargs, randomness)
        if not outs:
            raise ValueError("vmap: the mapped dimension has size 0")
        return _stack_outputs(outs, out_dims)
    return wrapper
