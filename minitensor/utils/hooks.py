"""``utils.hooks``: PyTorch's ``RemovableHandle`` (the handle ``Module.register_*_hook`` returns) and
``unserializable_hook``."""
from __future__ import annotations

from typing import TypeVar

from ..nn.modules.module import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]

_F = TypeVar("_F")


def unserializable_hook(f: _F) -> _F:
    """Marks a hook as not to be pickled (the attribute PyTorch sets); the function is unchanged."""
    f.__torch_unserializable__ = True  # type: ignore[attr-defined]
    return f
