"""The strict CuPy tier: a stand-in for CuPy 14.2 that is at least as strict as the real one, so the whole
``-m gpu`` suite runs the real ``CudaBackend`` on a machine without a GPU (docs/cuda.md, "The strict CuPy tier").

``install()`` (called by tests/conftest.py when ``MINITENSOR_STRICT_CUPY=1``, before minitensor is imported)
imports the real CuPy, takes it out of ``sys.modules`` and puts the double in its place: ``cupy``, ``cupy.cuda``,
``cupy.random``, ``cupyx`` and its scipy modules, ``cupy_backends.cuda.stream``. The Numba kernels run under
Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``), which takes NumPy arrays: a launch extension hands it the array
under each device array (``numba_adapter``)."""
from __future__ import annotations

import sys
from types import ModuleType

ENV = "MINITENSOR_STRICT_CUPY"


def install() -> None:
    from . import real
    real.stash()
    from . import cupy_module, cupyx_module, numba_adapter

    stream = ModuleType("cupy_backends.cuda.stream")
    stream.get_default_stream_ptr = lambda: 0  # type: ignore[attr-defined]
    sys.modules.update({
        "cupy": cupy_module, "cupy.cuda": cupy_module.cuda, "cupy.random": cupy_module.random,  # type: ignore
        "cupy.cuda.pinned_memory": cupy_module.cuda.pinned_memory,  # type: ignore[dict-item]
        "cupyx": cupyx_module.cupyx, "cupyx.scipy": cupyx_module.scipy_module,
        "cupyx.scipy.special": cupyx_module.special, "cupyx.scipy.sparse": cupyx_module.sparse,
        "cupy_backends": ModuleType("cupy_backends"), "cupy_backends.cuda": ModuleType("cupy_backends.cuda"),
        "cupy_backends.cuda.stream": stream,
    })
    numba_adapter.install()
