"""Fixtures shared by the test suite: a seeded, clean global state per test and a ``device`` parameter."""
from __future__ import annotations

import os
import sys
from typing import Any

import pytest

# MINITENSOR_TEST_WITHOUT_NUMBA=1 (a step of .ci/run): numba unimportable, as on a machine without it, so the
# NumPy bodies that stand in for the CPU kernels run under the whole suite. Set before minitensor loads.
if os.environ.get("MINITENSOR_TEST_WITHOUT_NUMBA") == "1":
    sys.modules["numba"] = None  # type: ignore[assignment]  # import numba now raises ImportError

# MINITENSOR_STRICT_CUPY=1 (with NUMBA_ENABLE_CUDASIM=1): the strict CuPy double of tests/cuda_strict stands in
# for CuPy, so the -m gpu suite runs the real CudaBackend without a GPU. Installed before minitensor loads.
if os.environ.get("MINITENSOR_STRICT_CUPY") == "1":
    from tests.cuda_strict import install

    install()

import minitensor as mt
from minitensor.autograd.grad_mode import state
from minitensor.device import set_type_device

# The Numba kernels' tests need NUMBA_ENABLE_CUDASIM=1 set before numba is first imported, so they run in
# their own pytest process (.ci/run): ``NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cudasim``.
collect_ignore = [] if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else ["cudasim"]
# The emulated kernels under ThreadSanitizer (about a minute): their own step in .ci/run.
if os.environ.get("MINITENSOR_RACE_CHECK") != "1":
    collect_ignore.append("cuda_emulation/test_races.py")
# The tests of the real CuPy / NVRTC / numba-cuda (tests/cuda_real) cannot see them where the double stands in.
if os.environ.get("MINITENSOR_STRICT_CUPY") == "1":
    collect_ignore.append("cuda_real")


def pytest_collection_modifyitems(config, items):
    """On the strict CuPy double, skip (with the reason) what only a GPU can show (tests/cuda_strict GPU_ONLY)."""
    if os.environ.get("MINITENSOR_STRICT_CUPY") != "1":
        return
    from tests.cuda_strict import GPU_ONLY

    for item in items:
        for where, why in GPU_ONLY.items():
            if item.nodeid.startswith(where) or getattr(item, "originalname", item.name) == where:
                item.add_marker(pytest.mark.skip(reason=f"strict CuPy double: {why}"))


@pytest.fixture(autouse=True)
def _clean_global_state():
    """Every test starts seeded, with grad mode on, anomaly mode off and float32 as the default dtype."""
    mt.manual_seed(0)
    default = mt.get_default_dtype()
    yield
    state.grad_enabled, state.anomaly = True, False
    state.anomaly_enabled, state.anomaly_check_nan, state.inference = False, True, False
    mt.set_default_dtype(default)
    mt.set_default_device(None)
    set_type_device(None)  # set_default_tensor_type's device


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request):
    """Each device the machine has: cpu always, cuda where a GPU and CuPy are present."""
    if request.param == "cuda" and not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    return mt.device(request.param)


@pytest.fixture
def lend_backend():
    """``lend_backend(dev, B)``: ``dev`` runs its ops on backend ``B`` for one test (a fake cuda device over
    the CPU's backend, where this machine has no GPU). ``device.backend`` is a slot filled on first use, so
    monkeypatch (which reads the old value first, loading CuPy) cannot set it; this restores it instead."""
    lent = []

    def lend(dev: mt.device, B: Any) -> None:
        try:
            old = object.__getattribute__(dev, "backend")  # not __getattr__: that would load the backend
        except AttributeError:
            old = None
        lent.append((dev, old))
        dev.backend = B

    yield lend
    for dev, old in reversed(lent):
        if old is None:
            del dev.backend
        else:
            dev.backend = old
