"""Fixtures for the Numba kernels under the CUDA simulator: run only as

    NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cudasim -q

The variable must be set before numba is first imported (hence not from here), so a run without it is an
error, not a skip: it would otherwise test nothing and look green.
"""
from __future__ import annotations

import os

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    raise RuntimeError("tests/cudasim needs the CUDA simulator: run NUMBA_ENABLE_CUDASIM=1 python -m pytest "
                       "tests/cudasim (the variable must be set before numba is imported)")

import numba  # noqa: E402
import pytest  # noqa: E402

if not numba.config.ENABLE_CUDASIM:
    raise RuntimeError("numba was imported before NUMBA_ENABLE_CUDASIM=1 took effect; run tests/cudasim in "
                       "its own pytest process")

from minitensor.backends.cpu.backend import NumpyBackend  # noqa: E402
from minitensor.backends.cuda.dropout import CudaDropoutOps  # noqa: E402
from minitensor.backends.cuda.optim import CudaOptimOps  # noqa: E402
from numba_cases import record_launches  # noqa: E402


class SimBackend(CudaDropoutOps, CudaOptimOps, NumpyBackend):
    """The Numba overrides on NumPy arrays (the simulator takes host arrays), the NumPy backend elsewhere."""


@pytest.fixture
def sim() -> SimBackend:
    return SimBackend()


@pytest.fixture
def ref() -> NumpyBackend:
    return NumpyBackend()


@pytest.fixture
def launches(monkeypatch) -> list[str]:
    """The names of the kernels launched through ``launch.launch_1d`` during the test, in order."""
    return record_launches(monkeypatch)
