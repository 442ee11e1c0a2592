"""``torch.func.functional_call``: run a module with other tensors in place of its parameters and buffers
(the per-sample and meta-learning idiom ``grad(lambda p: loss(functional_call(model, p, x)))(params)``).

The module's own registries are swapped for the call and restored afterwards, even when the call raises;
the given tensors are used as they are, so gradients flow to them, not to the module's parameters."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from ..tensor import Tensor

_MISSING: Any = object()


def _swap(module: Any, name: str, value: Any) -> Any:
    """Put ``value`` at dotted ``name`` (``_MISSING``: remove it); return what was there (or ``_MISSING``)."""
    prefix, _, attr = name.rpartition(".")
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of Tensor")
    mod = module.get_submodule(prefix)
    for registry in (mod._parameters, mod._buffers):
        if attr in registry:
            orig = registry[attr]
            if value is _MISSING:
                del registry[attr]
            else:
                registry[attr] = value  # as PyTorch: a plain tensor may sit in _parameters for the call
            return orig
    orig = getattr(mod, attr) if hasattr(mod, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of Tensor")
    if value is _MISSING:
        if orig is not _MISSING:
            delattr(mod, attr)
    else:
        setattr(mod, attr, value)
    return orig


def _untie(module: Any, given: dict[str, Any]) -> dict[str, Any]:
    """Give every name of a tied tensor (one Parameter under two names) the value given for any of them."""
    names_of: dict[int, set[str]] = {}
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    out = dict(given)
    for name in [n for n in given if n in tied]:
        group = tied[name]
        if len({id(given[n]) for n in group if n in given}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, which are tied. "
                             f"Consider using tie_weights=False")
        for other in group:
            out[other] = given[name]
    return out


@contextlib.contextmanager
def _reparametrize(module: Any, tensors: dict[str, Any], tie_weights: bool, strict: bool) -> Iterator[None]:
    untied = _untie(module, tensors) if tie_weights else tensors
    if strict:
        valid = {n for n, _ in [*module.named_parameters(remove_duplicate=False),
                                *module.named_buffers(remove_duplicate=False)]}
        errors = []
        if unexpected := sorted(set(untied) - valid):
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing := sorted(valid - set(untied)):
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(errors))
    originals: dict[str, Any] = {}
    try:
        for name, value in untied.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        # reverse order: a name swapped twice (tied) gets its first original back
        now = {name: _swap(module, name, orig) for name, orig in reversed(list(originals.items()))}
        tensors.update({k: now[k] for k in tensors if k in now})  # as PyTorch: the dict sees what the call left


def _functional_call(module: Any, tensors: dict[str, Any], args: Any, kwargs: dict[str, Any] | None,
                     tie_weights: bool, strict: bool) -> Any:
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize(module, tensors, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def functional_call(module: Any, parameter_and_buffer_dicts: dict[str, Any] | Sequence[dict[str, Any]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named tensors (dotted names, as ``named_parameters``; a dict or a
    sequence of dicts with disjoint keys) in place of its parameters and buffers. ``tie_weights``: a value
    given for one name of a tied parameter is used for all; ``strict``: the names must be exactly the
    module's parameters and buffers."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        if repeated := [k for k, n in counts.items() if n > 1]:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, tensors, args, kwargs, tie_weights, strict)


def _stacked_leaf(tensors: list[Any], name: str) -> Any:
    from ..functional import stack
    wants = {t.requires_grad for t in tensors}
    if len(wants) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if wants == {True} else result


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(params, buffers): each of the models' tensors stacked along a new dim 0 (M models), the parameters
    as new leaves, for ``vmap(lambda p, b, x: functional_call(models[0], (p, b), x), (0, 0, None))``."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]},
            {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]})
