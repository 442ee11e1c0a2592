"""Helpers of the layer modules."""
from __future__ import annotations

from typing import Any, TypeVar, cast

T = TypeVar("T", bound=type)


def dim_variants(base: T, name: str, doc: str, module: str, **attributes: Any) -> tuple[T, T, T]:
    """The 1-, 2- and 3-d subclasses of ``base`` (PyTorch's one class per dims): ``name`` and ``doc`` are
    formatted with the number of dims n, which the class keeps as ``_dims``."""
    def variant(n: int) -> T:
        return cast(T, type(name.format(n=n), (base,), {**attributes, "_dims": n, "__module__": module,
                                                        "__doc__": doc.format(n=n)}))
    return variant(1), variant(2), variant(3)
