"""The backend interface, one mixin per op family.

Every method takes and returns backend arrays (``self.xp`` arrays: NumPy on the CPU, CuPy on CUDA) and
is written once against ``self.xp``; a backend overrides a method only where a kernel pays, falling back
to ``super()`` for dtypes or layouts it does not cover. ``minitensor.backends.base.Backend`` composes them.
"""
from __future__ import annotations

from typing import Any, Callable


def xp_function(name: str) -> Callable[..., Any]:
    """The backend method that is ``self.xp.<name>`` on its arguments: a thin wrapper, kept as a method so a
    device can replace it with its own kernel."""
    def method(self: Any, *args: Any) -> Any:
        return getattr(self.xp, name)(*args)
    method.__name__ = method.__qualname__ = name
    return method
