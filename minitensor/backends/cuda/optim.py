"""The optimizer updates on CUDA: ``generic/optim.py``'s ``FusedOptimOps`` front end over one Numba kernel
launch per update (``numba_kernels/optim.py``), on CuPy arrays.

No host synchronisation per launch. Every launch goes to CuPy's current stream (``launch.current_stream``).
numba-cuda >= 0.30 takes a CuPy array through DLPack before ``__cuda_array_interface__``: it types it with
``__dlpack__(stream=-1)`` (no ordering) and binds it with ``__dlpack__(stream=<the launch stream>)``, and
CuPy, finding that stream to be its current one, adds nothing; on another stream it would enqueue an event
wait, still without blocking the host. The older CAI path synchronised the host on the array's stream at
every launch (``NUMBA_CUDA_ARRAY_INTERFACE_SYNC=1``, the default), which is why ``numba-cuda>=0.30`` is
pinned. To verify on a GPU: ``tests/cuda/test_cuda_numba_ops.py`` queues a two-second kernel, then 500 updates
(and a whole optimizer step), and checks that the host gets past them while the kernel still runs
(``cupy.cuda.Event().query()`` is False); or profile a training step with ``nsys profile --trace=cuda python
train.py`` and check that
``cudaStreamSynchronize`` / ``cuStreamSynchronize`` calls do not grow with the number of steps.
"""
from __future__ import annotations

from typing import Callable

from ..generic.optim import FusedOptimOps
from .numba_kernels import launch
from .numba_kernels.optim import adagrad_kernel, adam_kernel, rmsprop_kernel, sgd_kernel

KERNELS = {"sgd": sgd_kernel, "adam": adam_kernel, "rmsprop": rmsprop_kernel, "adagrad": adagrad_kernel}


class CudaOptimOps(FusedOptimOps):
    """``FusedOptimOps`` with one grid-stride kernel launch per update, on CuPy's current stream. Composed
    with ``NumpyBackend`` under ``NUMBA_ENABLE_CUDASIM=1``, the same code runs on NumPy arrays."""

    def _fused_kernel(self, name: str) -> Callable[..., None] | None:
        kernel = KERNELS[name]
        return lambda param, *args: launch.launch_1d(kernel, param.size, param, *args)
