"""What several layers' ``__init__`` and ``extra_repr`` share (PyTorch keeps such helpers in
``torch/nn/modules/utils.py`` too)."""
from __future__ import annotations

from typing import Any, Iterable, Mapping, TypeVar, cast

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
