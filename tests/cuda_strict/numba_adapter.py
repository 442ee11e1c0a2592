"""Numba's CUDA simulator takes NumPy arrays, not the double's device arrays: a launch extension (Numba's own
``prepare_args`` hook, the one CuPy interop also goes through) hands it the NumPy array under each device
array, for every kernel jitted once the tier is installed. The backend's kernels are unchanged."""
from __future__ import annotations

from typing import Any

from .ndarray import ndarray


class DeviceArrayArgs:
    """``prepare_args`` of a Numba extension: a device array becomes its (shared) NumPy buffer."""

    def prepare_args(self, ty: Any, val: Any, stream: Any = None, retr: Any = None) -> tuple[Any, Any]:
        return ty, (val._a if isinstance(val, ndarray) else val)


def install() -> None:
    """Add the extension to every simulator kernel (a no-op when Numba runs on a real GPU)."""
    from numba import config
    if not config.ENABLE_CUDASIM:
        return
    from numba.cuda.simulator import kernel

    original = kernel.FakeCUDAKernel.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.extensions = [*self.extensions, DeviceArrayArgs()]

    kernel.FakeCUDAKernel.__init__ = init
