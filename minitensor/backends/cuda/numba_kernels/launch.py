"""What every Numba launch shares: the grid for a grid-stride kernel, and the stream (CuPy's current one).

One stream: Numba launches on the stream CuPy is using, so a kernel runs after the CuPy work that produced
its inputs and before the CuPy work that reads its outputs, with no host synchronisation in between. The
Numba wrapper of a CuPy stream (``numba.cuda.external_stream``) is built once per stream pointer and passed
explicitly to every launch. CuPy's legacy null stream (pointer 0) maps to Numba's legacy default stream,
whose handle (``CU_STREAM_LEGACY``) is also what CuPy's DLPack export names that stream (a consumer stream
of 0 is refused by the DLPack protocol).

Numba launches in the CUDA context it attached to first (the primary context of the GPU current at its
first use), so the Numba tier serves one GPU per process, as the backend's notes say.

Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) ``external_stream`` raises (the simulator runs every
kernel synchronously on the host and has no real streams), and CuPy may be absent: launches then use
Numba's default stream and this module never imports CuPy.
"""
from __future__ import annotations

import warnings
from typing import Any

import numba
from numba import cuda

from ...compiled import run_kernel

SIMULATED: bool = bool(getattr(numba.config, "ENABLE_CUDASIM", 0))

# 256 threads per block, at most 4096 blocks (about four waves of an H100: 132 SMs x 8 resident blocks of
# 256 threads); larger arrays take several turns of the grid-stride loop. The simulator runs each thread as
# a Python thread, so it gets a small grid (which also makes the tests walk the grid-stride loop).
THREADS_PER_BLOCK = 32 if SIMULATED else 256
MAX_BLOCKS = 2 if SIMULATED else 4096

# A bias of ten elements launches one block on purpose; Numba's low-occupancy warning (any grid under 128
# blocks) would otherwise fire for most launches of a training step. Only that message is silenced.
warnings.filterwarnings("ignore", message=r"Grid size \d+ will likely result in GPU under-utilization")

_streams: dict[int, Any] = {}


def launch_config(size: int) -> tuple[int, int]:
    """(blocks, threads per block) for a grid-stride kernel over ``size`` > 0 elements."""
    blocks = min(-(-size // THREADS_PER_BLOCK), MAX_BLOCKS)
    return blocks, THREADS_PER_BLOCK


def current_stream() -> Any:
    """The Numba stream for CuPy's current stream (Numba's default stream under the simulator)."""
    if SIMULATED:
        return cuda.default_stream()
    import cupy  # here, not at import: the simulator runs without CuPy

    ptr = cupy.cuda.get_current_stream().ptr
    stream = _streams.get(ptr)
    if stream is None:
        stream = _streams[ptr] = cuda.external_stream(ptr) if ptr else cuda.legacy_default_stream()
    return stream


def launch_1d(kernel: Any, size: int, *args: Any) -> None:
    """Launch a grid-stride ``kernel(*args)`` over ``size`` elements on the current stream (nothing when
    ``size`` is 0). Asynchronous: CuPy arrays enter by DLPack on that same stream, without a host sync."""
    if size == 0:
        return
    blocks, threads = launch_config(size)
    name = getattr(kernel, "__name__", type(kernel).__name__)  # a dispatcher's is its Python function's
    run_kernel(name, not SIMULATED, kernel[blocks, threads, current_stream()], *args)
