"""The nested containers ``torch.func`` maps over: dicts, lists and tuples of tensors (a module's
parameter dict, a tuple of outputs). ``flatten`` lists the leaves; ``unflatten`` rebuilds the same
structure around new leaves."""
from __future__ import annotations

from typing import Any, Callable

Spec = Any  # None for a leaf; (kind, keys or length, [child specs]) for a container


def flatten(tree: Any) -> tuple[list[Any], Spec]:
    """(leaves in order, spec): dicts in key order, lists/tuples in index order; anything else is a leaf."""
    if isinstance(tree, dict):
        leaves: list[Any] = []
        specs = []
        for value in tree.values():
            sub, spec = flatten(value)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), list(tree.keys()), specs)
    if isinstance(tree, (list, tuple)):
        leaves, specs = [], []
        for value in tree:
            sub, spec = flatten(value)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), len(tree), specs)
    return [tree], None


def unflatten(spec: Spec, leaves: list[Any]) -> Any:
    """The structure ``spec`` with its leaves, in order, taken from ``leaves``."""
    it = iter(leaves)

    def build(s: Spec) -> Any:
        if s is None:
            return next(it)
        kind, keys, children = s
        values = [build(c) for c in children]
        if issubclass(kind, dict):
            return kind(zip(keys, values))
        if kind is not list and kind is not tuple and hasattr(kind, "_fields"):
            return kind(*values)  # a namedtuple
        return kind(values)
    return build(spec)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = flatten(tree)
    return unflatten(spec, [fn(x) for x in leaves])


def broadcast_prefix(prefix: Any, tree: Any, what: str) -> list[Any]:
    """One entry of ``prefix`` per leaf of ``tree``: a non-container prefix (an int, None) covers the
    whole subtree below it, as ``in_dims=(0, None)`` covers a dict of parameters with None."""
    if isinstance(prefix, (list, tuple, dict)):
        if isinstance(prefix, dict) != isinstance(tree, dict) or not isinstance(tree, (list, tuple, dict)) \
                or len(prefix) != len(tree):
            raise ValueError(f"{what}: the structure {prefix!r} does not match that of its input")
        keys = list(prefix.keys()) if isinstance(prefix, dict) else range(len(prefix))
        out: list[Any] = []
        for k in keys:
            out += broadcast_prefix(prefix[k], tree[k], what)
        return out
    return [prefix] * len(flatten(tree)[0])
