"""What the simulator run (tests/cudasim) and the GPU run (tests/cuda/test_cuda_numba_ops.py) of the Numba tier
share: the optimizer-update cases (from tests/optim_cases.py, shared with the CPU loops' tests), a record of
the kernels launched, and a call of every override.
"""
from __future__ import annotations

from optim_cases import (REPRESENTATIVE, STEPS, assert_same_trajectory, optimizer_cases,  # noqa: F401
                          check_every_size_and_shape, trajectory)

from minitensor.backends.cuda.dropout import CudaDropoutOps
from minitensor.backends.cuda.numba_kernels import launch
from minitensor.backends.cuda.optim import CudaOptimOps


class NumbaOps(CudaDropoutOps, CudaOptimOps):
    """The CUDA backend's Numba tier, its dropout and optim families (``backends/cuda/{dropout,optim}.py``),
    for looking its methods up (a backend composes the two families directly, as ``CudaBackend`` does)."""


def record_launches(monkeypatch) -> list[str]:
    """From now on (until monkeypatch undoes it), the name of each kernel launched through
    ``launch.launch_1d``, in order."""
    seen: list[str] = []
    real = launch.launch_1d

    def recording(kernel, size, *args):
        seen.append(kernel.py_func.__name__)
        real(kernel, size, *args)

    monkeypatch.setattr(launch, "launch_1d", recording)
    return seen


def call_every_override(B, xp, dtype) -> None:
    """Each of the six ``NumbaOps`` methods once, on (2, 3) arrays of ``dtype`` made by ``xp``."""
    x = xp.ones((2, 3), dtype)
    z = [xp.zeros((2, 3), dtype) for _ in range(3)]
    B.sgd_update(x, x.copy(), z[0], 0.1, 0.9, 0.0, True, 0.1, False, False)
    B.adam_update(x, x.copy(), *z, 2, 1e-3, 0.9, 0.999, 1e-8, 0.1, True, True, False)
    B.rmsprop_update(x, x.copy(), *z, 1e-2, 0.99, 1e-8, 0.0, 0.9, True, False)
    B.adagrad_update(x, x.copy(), z[0], 2, 0.1, 0.0, 0.0, 1e-10, False)
    B.dropout(x, 0.5)
    B.dropout_backward(x, xp.ones((2, 3), bool), 0.5)
