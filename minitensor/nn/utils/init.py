"""``nn.utils.skip_init``: a module built without PyTorch's wasted initialisation pass."""
from __future__ import annotations

import inspect
from typing import Any


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` on ``device`` (default CPU), its parameters left for the caller to
    fill. PyTorch builds it on the meta device and allocates empty memory; minitensor has no meta device, so
    the ordinary initialisation runs (the values are unspecified either way)."""
    from ..modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.get("device") or "cpu"
    return module_cls(*args, **kwargs)


__all__ = ["skip_init"]
