"""``cupy.RawModule`` / ``RawKernel`` of the strict double: the g++ emulation of tests/cuda_emulation (our ``.cu``
files compiled against ``cuda_emu.h``), fed the wrapper arrays' memory. Arguments are marshalled as CuPy's
``_pointer`` does; a host NumPy array is refused there (fake_cupy's TypeError)."""
from __future__ import annotations

from typing import Any, Sequence

from ..cuda_emulation import fake_cupy
from .ndarray import ndarray


def _device_view(a: Any) -> Any:
    """A device array as the emulation's DeviceArray over the same memory (its ``.data.ptr`` unchanged)."""
    return a._a.view(fake_cupy.DeviceArray) if isinstance(a, ndarray) else a


class RawKernel(fake_cupy.RawKernel):
    def __call__(self, grid: tuple, block: tuple, args: Sequence[Any], shared_mem: int = 0,
                 stream: Any = None) -> None:
        super().__call__(grid, block, [_device_view(a) for a in args], shared_mem, stream)


class RawModule(fake_cupy.RawModule):
    def get_function(self, name: str) -> RawKernel:
        if name not in self.name_expressions:
            raise KeyError(f"{name} is not among the module's name expressions")
        return RawKernel(self._library, name)
