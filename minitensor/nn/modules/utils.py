"""What several layers' ``__init__`` and ``extra_repr`` share (PyTorch keeps such helpers in
``torch/nn/modules/utils.py`` too)."""
from __future__ import annotations

import collections.abc
from typing import Any, Callable, Iterable, Mapping, TypeVar, cast

from ...creation import empty
from ..parameter import Parameter
from .module import Module


def optional_parameters(module: Module, present: bool, names: Iterable[str], *shape: int, device: Any = None,
                        dtype: Any = None) -> None:
    """Register ``names`` as uninitialised parameters of ``shape`` when ``present``, else as None (a
    disabled bias or affine pair, which keeps its name, as in PyTorch)."""
    for name in names:
        module.register_parameter(name, Parameter(empty(*shape, device=device, dtype=dtype)) if present else None)


def changed_options(module: Module, defaults: Mapping[str, Any]) -> str:
    """``, name=value`` for each option that is not at its default, in the order of ``defaults``: PyTorch's
    reprs compare with ``is not`` against a True, False or None default and with ``!=`` otherwise. A module
    without the attribute has it at its default."""
    text = ""
    for name, default in defaults.items():
        value = getattr(module, name, default)
        if (value is not default) if default is None or isinstance(default, bool) else (value != default):
            text += f", {name}={value}"
    return text


T = TypeVar("T", bound=type)


def dim_variants(base: T, name: str, doc: str, module: str, **attributes: Any) -> tuple[T, T, T]:
    """The 1-, 2- and 3-d subclasses of ``base`` (PyTorch's one class per dims): ``name`` and ``doc`` are
    formatted with the number of dims n, which the class keeps as ``_dims``, and with ``spatial``, their
    names ("L", "H, W" or "D, H, W")."""
    def variant(n: int) -> T:
        spatial = ("L", "H, W", "D, H, W")[n - 1]
        return cast(T, type(name.format(n=n), (base,), {**attributes, "_dims": n, "__module__": module,
                                                        "__doc__": doc.format(n=n, spatial=spatial)}))
    return variant(1), variant(2), variant(3)


# PyTorch's own helpers of this module, which layers written for PyTorch import from it
def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    """``parse(x)``: an iterable x as a tuple, anything else repeated n times (``_pair(3) == (3, 3)``)."""
    def parse(x: Any) -> tuple[Any, ...]:
        return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,) * n
    parse.__name__ = name
    return parse


_single, _pair, _triple, _quadruple = (_ntuple(n, f"_{name}") for n, name in
                                       ((1, "single"), (2, "pair"), (3, "triple"), (4, "quadruple")))


def _reverse_repeat_tuple(t: tuple[Any, ...], n: int) -> tuple[Any, ...]:
    """Each element of t, last first, repeated n times: the (last dim first) padding F.pad takes from a
    convolution's padding, ``(1, 2), 2 -> (2, 2, 1, 1)``."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: list[int]) -> Any:
    """An adaptive pooling's output size with each None replaced by the input's size there."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys that start with it, in place (e.g. DistributedDataParallel's
    "module."), and from the keys of the state dict's ``_metadata`` if it has one."""
    for key in list(state_dict):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata):
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):  # "" is the wrapper itself
                metadata[key[len(prefix):]] = metadata.pop(key)
