"""The RawKernel tier without a GPU: our ``.cu`` kernels compiled with g++ against ``cuda_emu.h`` (CPU
threads for a block's threads, real barriers, atomics), launched through the CUDA backend's family mixins and
``rawmodule`` unchanged, with ``fake_cupy`` standing in for CuPy in ``sys.modules``. docs/cuda.md says what this proves
and what only a GPU can.
"""
from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from typing import Any

from minitensor.backends.base import Backend
from minitensor.backends.cuda import rawmodule
from minitensor.backends.cuda.activation import CudaActivationOps
from minitensor.backends.cuda.amp import CudaAmpOps
from minitensor.backends.cuda.conv import CudaConvOps
from minitensor.backends.cuda.embedding import CudaEmbeddingOps
from minitensor.backends.cuda.loss import CudaLossOps
from minitensor.backends.cuda.pooling import CudaPoolOps

from . import build, fake_cupy


def available() -> bool:
    return build.compiler() is not None


def _clear_kernel_caches() -> None:
    """Forget rawmodule's loaded modules and kernels (those of the fake or of the real CuPy)."""
    for value in vars(rawmodule).values():
        if isinstance(value, functools._lru_cache_wrapper):
            value.cache_clear()


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """``fake_cupy`` as ``cupy`` in sys.modules (every ``import cupy`` of the kernel tier gets it), undone
    on exit, with rawmodule's caches cleared both ways."""
    saved = sys.modules.get("cupy")
    sys.modules["cupy"] = fake_cupy  # type: ignore[assignment]
    _clear_kernel_caches()
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop("cupy", None)
        else:
            sys.modules["cupy"] = saved
        _clear_kernel_caches()


class EmulatedCudaBackend(CudaActivationOps, CudaConvOps, CudaPoolOps, CudaLossOps, CudaEmbeddingOps, CudaAmpOps,
                          Backend):
    """``CudaBackend``'s RawKernel families (``backends/cuda/<family>.py``) over the generic bodies, as there,
    with ``xp`` the fake CuPy: every override runs its kernel through ``rawmodule.launch`` and the emulated
    library, and hands ``super()`` what it does not cover. (The Numba tier runs under Numba's own simulator:
    tests/cudasim.)"""

    name = "cuda"
    xp: Any = fake_cupy
    array_type = fake_cupy.DeviceArray

    @classmethod
    def is_available(cls) -> bool:
        return available()

    def to_numpy(self, a: Any) -> Any:
        return fake_cupy.asnumpy(a)
