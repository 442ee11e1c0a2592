"""The user's allow-list for ``load(..., weights_only=True)``, as ``torch.serialization`` has it.

Each entry is a class or function, named in checkpoints by ``{__module__}.{__qualname__}``, or a pair
``(obj, "full.path")`` when the checkpoint names it otherwise (for example a class that moved).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

SafeGlobal = Callable[..., Any] | tuple[Callable[..., Any], str]
_marked: list[SafeGlobal] = []


def add_safe_globals(safe_globals: Iterable[SafeGlobal]) -> None:
    """Marks classes and functions as safe for ``weights_only`` load: a checkpoint may then call them
    (classes: instantiate them and set their state)."""
    for g in safe_globals:
        _full_name(g)  # checks the entry now rather than at load time
        if g not in _marked:
            _marked.append(g)


def get_safe_globals() -> list[SafeGlobal]:
    """The user-added globals that are safe for ``weights_only`` load."""
    return list(_marked)


def clear_safe_globals() -> None:
    """Forget every user-added safe global."""
    _marked.clear()


class safe_globals:
    """Context manager: ``with safe_globals([MyClass]): load(path)`` allows ``MyClass`` inside the block."""

    def __init__(self, safe_globals: Iterable[SafeGlobal]) -> None:
        self.safe_globals = list(safe_globals)

    def __enter__(self) -> None:
        self._added = [g for g in self.safe_globals if g not in _marked]
        add_safe_globals(self._added)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        for g in self._added:
            _marked.remove(g)


def user_allowed() -> dict[str, Any]:
    """The allowed objects by the full name a checkpoint uses for them."""
    return {_full_name(g): g[0] if isinstance(g, tuple) else g for g in _marked}


def _full_name(g: SafeGlobal) -> str:
    if isinstance(g, tuple):
        if len(g) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple "
                             f"of length: {len(g)}")
        if type(g[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                            f"{type(g[1])}")
        return g[1]
    if not callable(g):
        raise TypeError(f"safe globals are classes or functions (or (object, name) pairs), got {g!r}")
    return f"{g.__module__}.{g.__qualname__}"
