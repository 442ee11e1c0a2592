"""The fused CPU optimizer updates (``backends/cpu/optim.py``) against the NumPy bodies of ``OptimOps``.

``OptimOps`` is the reference here (tests/test_optim.py checks it against PyTorch's formulas in float64).
The loops do the same float operations in the same order, so the trajectories agree to the last bit in
practice; the tolerance leaves room for a last-bit difference of a sqrt. The contract: C-contiguous
float32/float64 arrays of one shape take the compiled loop; any other layout or dtype, and every call
without numba, takes the NumPy body, with the same results.
"""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

from minitensor.backends.cpu import optim as optim_ops
from minitensor.backends.cpu.optim import CpuOptimOps
from minitensor.backends.cpu.backend import NumpyBackend
from minitensor.backends.generic.optim import OptimOps
from optim_cases import (HALF_DTYPES, REPRESENTATIVE, STEPS, assert_same_trajectory, check_16_bit_against_float64,
                         check_every_size_and_shape, optimizer_cases, trajectory)

TOL = {np.float32: dict(rtol=1e-6, atol=1e-7), np.float64: dict(rtol=1e-14, atol=1e-15)}
UPDATES = ("sgd_update", "adam_update", "rmsprop_update", "adagrad_update")


# The CPU backend with the fused updates: NumpyBackend itself once it composes CpuOptimOps.
FusedBackend = (NumpyBackend if issubclass(NumpyBackend, CpuOptimOps)
                else type("FusedBackend", (CpuOptimOps, NumpyBackend), {}))


class NumpyBodies(NumpyBackend):
    """The CPU backend with the NumPy bodies of the updates, whatever NumpyBackend composes."""
    sgd_update, adam_update = OptimOps.sgd_update, OptimOps.adam_update
    rmsprop_update, adagrad_update = OptimOps.rmsprop_update, OptimOps.adagrad_update


@pytest.fixture(scope="module")
def fused() -> NumpyBackend:
    pytest.importorskip("numba")
    if optim_ops.kernels() is None:
        pytest.skip("the compiled loops are switched off (MINITENSOR_NUMBA=0)")
    return FusedBackend()


@pytest.fixture(scope="module")
def ref() -> NumpyBackend:
    return NumpyBodies()


@pytest.fixture
def loops_called(monkeypatch, fused) -> list[str]:
    """The names of the compiled loops called from now on, in order."""
    seen: list[str] = []
    module = optim_ops.kernels()

    def recording(name):
        def call(*args):
            seen.append(name)
            getattr(module, name)(*args)
        return call

    names = ("sgd_kernel", "adam_kernel", "rmsprop_kernel", "adagrad_kernel")
    monkeypatch.setattr(optim_ops, "kernels", lambda: SimpleNamespace(**{n: recording(n) for n in names}))
    return seen


# ------------------------------------------------------------------------------------------------ tests
def test_overrides_keep_the_base_signatures():
    for name in UPDATES:
        assert inspect.signature(getattr(CpuOptimOps, name)) == inspect.signature(getattr(OptimOps, name)), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("update, states, loop", list(optimizer_cases()))
def test_update_matches_the_numpy_body(fused, ref, loops_called, update, states, loop, dtype):
    got = trajectory(fused, update, states, (37,), dtype)
    assert loops_called == [loop] * STEPS  # one compiled loop per parameter per step
    assert_same_trajectory(got, trajectory(ref, update, states, (37,), dtype), **TOL[dtype])


@pytest.mark.parametrize("shape", [(), (1,), (1000,), (3, 4, 5)], ids=str)
def test_updates_cover_every_size_and_shape(fused, ref, loops_called, shape):
    check_every_size_and_shape(fused, ref, loops_called, shape, TOL[np.float32])


@pytest.mark.parametrize("dtype, grad_layout", [
    (np.float32, lambda g: np.ascontiguousarray(g.T).T),  # a transposed (F-ordered) gradient
    (np.float32, lambda g: np.broadcast_to(g[:1], g.shape)),  # a broadcast gradient (zero stride)
    (np.float16, lambda g: g),  # dtypes Numba cannot compile for (docs/amp.md)
    (ml_dtypes.bfloat16, lambda g: g),
], ids=["transposed", "broadcast", "float16", "bfloat16"])
def test_other_layouts_and_dtypes_take_the_numpy_body(fused, ref, loops_called, dtype, grad_layout):
    for update, states, _ in REPRESENTATIVE:
        got = trajectory(fused, update, states, (4, 6), dtype, grad_layout)
        want = trajectory(ref, update, states, (4, 6), dtype, grad_layout)
        assert_same_trajectory(got, want, rtol=0, atol=0)
    assert loops_called == []


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=lambda d: np.dtype(d).name)
def test_16_bit_updates_match_float64(fused, loops_called, dtype):
    check_16_bit_against_float64(fused, dtype)
    # only the float64 reference took the loops: Numba compiles neither float16 nor bfloat16 on the CPU
    assert len(loops_called) == len(REPRESENTATIVE) * STEPS


def test_the_kernels_write_in_place_and_allocate_nothing_visible(fused):
    param, grad = np.ones(5, np.float32), np.full(5, 0.5, np.float32)
    m, v = np.zeros_like(param), np.zeros_like(param)
    ids = [id(a) for a in (param, m, v)]
    fused.adam_update(param, grad, m, v, None, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False)
    assert [id(a) for a in (param, m, v)] == ids
    # The first Adam step moves every parameter by lr (m_hat / sqrt(v_hat) = 1), and m = (1 - beta1) g.
    np.testing.assert_allclose(param, 0.9, rtol=1e-6)
    np.testing.assert_allclose(m, 0.05, rtol=1e-6)


def test_without_numba_the_numpy_bodies_run_and_nothing_imports_it():
    """numba made unimportable: ``import minitensor`` works, the kernels' loader says None, and the fused
    backend's updates fall back to the NumPy bodies with the same results."""
    script = textwrap.dedent("""
        import sys
        from functools import partial
        sys.modules["numba"] = None  # import numba now raises ImportError
        import numpy as np
        import minitensor
        from minitensor.backends.cpu import optim as optim_ops
        from minitensor.backends.cpu.backend import NumpyBackend
        from minitensor.backends.generic.optim import OptimOps
        assert optim_ops.kernels() is None
        Fused = optim_ops.CpuOptimOps
        B = NumpyBackend() if issubclass(NumpyBackend, Fused) else type("F", (Fused, NumpyBackend), {})()
        a = [np.linspace(-1, 1, 6, dtype=np.float32) for _ in range(2)]
        states = [[np.zeros(6, np.float32) for _ in range(2)] for _ in range(2)]
        g = np.linspace(2, 3, 6, dtype=np.float32)
        for update, p, (m, v) in zip((B.adam_update, partial(OptimOps.adam_update, B)), a, states):
            update(p, g, m, v, None, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False)
        assert np.array_equal(a[0], a[1])
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "MINITENSOR_NUMBA": "1"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_import_minitensor_does_not_import_numba():
    script = "import sys, minitensor, minitensor.nn, minitensor.optim; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr


def test_the_cpu_backend_runs_the_compiled_updates():
    from minitensor.backends.cpu.optim import CpuOptimOps
    from minitensor.backends.cpu.backend import NumpyBackend
    assert issubclass(NumpyBackend, CpuOptimOps)
