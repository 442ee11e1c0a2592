"""The launch helper under the CUDA simulator: grid sizes, the stream every launch gets, and no CuPy.

Run only as ``NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cudasim -q`` (conftest.py refuses otherwise).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from minitensor.backends.cuda.numba_kernels import launch


@cuda.jit
def write_index(out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] += i + 1  # += so that an element visited twice shows


class RecordingKernel:
    """Stands in for a Numba kernel: records each ``kernel[blocks, threads, stream](*args)``."""

    def __init__(self):
        self.launches = []

    def __getitem__(self, config):
        return lambda *args: self.launches.append((config, args))


def test_the_simulator_has_no_external_streams_so_the_helper_uses_the_default_stream():
    assert launch.SIMULATED
    with pytest.raises(RuntimeError):
        cuda.external_stream(0)
    assert isinstance(launch.current_stream(), type(cuda.default_stream()))  # and no error


@pytest.mark.parametrize("size", [1, 31, 32, 33, 64, 65, 1000, 10**10])
def test_launch_config_covers_the_size_within_the_block_cap(size):
    blocks, threads = launch.launch_config(size)
    assert threads == launch.THREADS_PER_BLOCK
    assert 1 <= blocks <= launch.MAX_BLOCKS
    # one thread per element up to the cap, never a block with no element to start on
    assert blocks * threads >= min(size, launch.MAX_BLOCKS * threads)
    assert (blocks - 1) * threads < size


def test_launch_passes_config_and_stream_explicitly_and_skips_empty_arrays(monkeypatch):
    stream = object()
    monkeypatch.setattr(launch, "current_stream", lambda: stream)
    kernel = RecordingKernel()
    launch.launch_1d(kernel, 0, "unused")
    assert kernel.launches == []
    launch.launch_1d(kernel, 100, "a", 1)
    assert kernel.launches == [((*launch.launch_config(100), stream), ("a", 1))]


@pytest.mark.parametrize("size", [1, 64, 65, 333])
def test_grid_stride_loop_visits_every_element_once(size):
    out = np.zeros(size, np.int64)
    launch.launch_1d(write_index, size, out)
    np.testing.assert_array_equal(out, np.arange(1, size + 1))


def test_the_numba_tier_runs_without_cupy_under_the_simulator():
    """With cupy unimportable, the backend methods still run and nothing asks for CuPy."""
    code = (
        "import sys\n"
        "sys.modules['cupy'] = None\n"
        "import numpy as np\n"
        "from minitensor.backends.cpu.backend import NumpyBackend\n"
        "from minitensor.backends.cuda.dropout import CudaDropoutOps\n"
        "from minitensor.backends.cuda.optim import CudaOptimOps\n"
        "class SimBackend(CudaDropoutOps, CudaOptimOps, NumpyBackend): pass\n"
        "B = SimBackend()\n"
        "p, g, b = np.ones(5, np.float32), np.ones(5, np.float32), np.zeros(5, np.float32)\n"
        "B.sgd_update(p, g, b, 0.5, 0.9, 0.0, False, 0.0, False, True)\n"
        "assert (p == 0.5).all(), p\n"
        "y, mask = B.dropout(np.ones(5, np.float32), 0.5)\n"
        "assert sys.modules['cupy'] is None\n"
    )
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, "-c", code], env=env, cwd=Path(__file__).parents[2],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
