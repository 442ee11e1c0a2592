"""Every ``NumbaOps`` override under the CUDA simulator against ``NumpyBackend``'s own method (the reference,
itself checked against PyTorch's formulas in tests/test_optim.py and tests/ops/test_dropout_embedding.py).

Run only as ``NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cudasim -q``; conftest.py refuses to run
otherwise. The contract checked: C-contiguous float32/float64 arrays of one shape take exactly one kernel
launch per call; any other layout or dtype takes the generic method (no launch), with the same results.
"""
from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest

from minitensor.backends.cuda.numba_kernels import launch
from minitensor.backends.cuda.optim import CudaOptimOps
from minitensor.backends.generic.dropout import DropoutOps
from minitensor.backends.generic.optim import OptimOps
from numba_cases import (NumbaOps, REPRESENTATIVE, STEPS, assert_same_trajectory, call_every_override, optimizer_cases,
                         check_every_size_and_shape, trajectory)
from optim_cases import HALF_DTYPES, check_16_bit_against_float64

DTYPES = [np.float32, np.float64]
# The simulator evaluates the same operations in the same order as the NumPy backend (bit-identical in
# practice); the tolerance only leaves room for a last-bit difference of a double-rounded sqrt.
TOL = {np.float32: dict(rtol=1e-6, atol=1e-7), np.float64: dict(rtol=1e-14, atol=1e-15)}


def test_overrides_keep_the_base_signatures(sim):
    for name, base in {"sgd_update": OptimOps, "adam_update": OptimOps, "rmsprop_update": OptimOps,
                       "adagrad_update": OptimOps, "dropout": DropoutOps,
                       "dropout_backward": DropoutOps}.items():
        assert inspect.signature(getattr(NumbaOps, name)) == inspect.signature(getattr(base, name)), name
        assert getattr(type(sim), name) is getattr(NumbaOps, name), name
    assert type(sim)._fused_kernel is CudaOptimOps._fused_kernel  # the optim front end launches the kernels


# ---- optimizer updates ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("update, states, kernel", list(optimizer_cases()))
def test_update_matches_the_numpy_backend(sim, ref, launches, update, states, kernel, dtype):
    got = trajectory(sim, update, states, (7,), dtype)
    assert launches == [kernel] * STEPS  # exactly one launch per parameter per step
    assert_same_trajectory(got, trajectory(ref, update, states, (7,), dtype), **TOL[dtype])


@pytest.mark.parametrize("shape", [(), (1,), (63,), (1000,), (3, 4, 5)], ids=str)
def test_updates_cover_every_size_and_shape(sim, ref, launches, shape):
    # 1000 elements take the simulator's 64-thread grid round its grid-stride loop many times.
    check_every_size_and_shape(sim, ref, launches, shape, TOL[np.float32])


@pytest.mark.parametrize("dtype, grad_layout", [
    (np.float32, lambda g: np.ascontiguousarray(g.T).T),  # a transposed (F-ordered) gradient
    (np.float32, lambda g: np.broadcast_to(g[:1], g.shape)),  # a broadcast gradient (zero stride)
    (np.float32, lambda g: g.astype(np.float64)),  # a gradient of another dtype
    (np.float16, lambda g: g),  # dtypes the kernels do not cover (docs/amp.md)
    (ml_dtypes.bfloat16, lambda g: g),
], ids=["transposed", "broadcast", "mixed-dtype", "float16", "bfloat16"])
def test_uncovered_layouts_fall_back_to_the_generic_method(sim, ref, launches, dtype, grad_layout):
    for update, states, _ in REPRESENTATIVE:
        got = trajectory(sim, update, states, (4, 6), dtype, grad_layout)
        want = trajectory(ref, update, states, (4, 6), dtype, grad_layout)
        for g, w in zip(got, want):
            for name in w:
                np.testing.assert_array_equal(g[name], w[name])
    assert launches == []


@pytest.mark.parametrize("dtype", HALF_DTYPES, ids=lambda d: np.dtype(d).name)
def test_16_bit_updates_match_float64(sim, launches, dtype):
    check_16_bit_against_float64(sim, dtype)
    assert len(launches) == len(REPRESENTATIVE) * STEPS  # the float64 reference's: 16-bit takes the generic body


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalars_reach_the_kernels_typed(sim, monkeypatch, dtype):
    """On a GPU a Python float would compile a float64 kernel; each scalar must carry the array's dtype
    (dropout's keep probability is float32, like the uniform draw it is compared with)."""
    calls = []
    monkeypatch.setattr(launch, "launch_1d", lambda kernel, size, *args: calls.append((size, args)))
    call_every_override(sim, np, dtype)
    assert len(calls) == 6
    for size, args in calls:
        assert size == 6
        for a in args:
            if isinstance(a, np.ndarray):
                assert a.ndim == 1 and a.size == size and a.flags.c_contiguous
            else:
                assert type(a) in (bool, dtype, np.float32), (type(a), args)


# ---- dropout ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_keep_rate_and_exact_scaling(sim, launches, dtype, p):
    n = 2000
    x = np.random.default_rng(1).uniform(0.5, 2.0, (40, n // 40)).astype(dtype)
    y, mask = sim.dropout(x, p)
    assert launches == ["dropout_forward_kernel"]
    assert y.shape == mask.shape == x.shape and y.dtype == x.dtype and mask.dtype == np.bool_
    kept = int(mask.sum())
    assert abs(kept - n * (1 - p)) <= 5 * np.sqrt(n * p * (1 - p))  # binomial(n, 1 - p), five sigma
    np.testing.assert_array_equal(y[mask], x[mask] * dtype(1 / (1 - p)))
    np.testing.assert_array_equal(y[~mask], 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_matches_the_numpy_backend_draw_for_draw(sim, ref, dtype):
    """One seed, one generator: the same float32 draw gives the same mask; NaN and inf stay NaN when
    dropped, as ``x * mask`` leaves them."""
    x = np.random.default_rng(2).standard_normal(500).astype(dtype)
    x[:3] = [np.nan, np.inf, -np.inf]
    for backend in (sim, ref):
        backend.seed(7)
    (y, mask), (y_ref, mask_ref) = sim.dropout(x, 0.3), ref.dropout(x, 0.3)
    np.testing.assert_array_equal(mask, mask_ref)
    np.testing.assert_array_equal(y, y_ref)
    sim.seed(7)
    np.testing.assert_array_equal(sim.dropout(x, 0.3)[1], mask)  # reseeding reproduces the mask
    assert not np.array_equal(sim.dropout(x, 0.3)[1], mask)  # and the generator moves on


@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_p0_keeps_everything_and_p1_drops_everything(sim, dtype):
    x = np.random.default_rng(3).standard_normal((5, 7)).astype(dtype)
    y, mask = sim.dropout(x, 0.0)
    assert mask.all()
    np.testing.assert_array_equal(y, x)
    y, mask = sim.dropout(x, 1.0)
    assert not mask.any()
    np.testing.assert_array_equal(y, np.zeros_like(x))
    np.testing.assert_array_equal(sim.dropout_backward(x, mask, 1.0), np.zeros_like(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.0, 0.25, 0.6])
def test_dropout_backward_is_gy_mask_over_keep(sim, ref, launches, dtype, p):
    rng = np.random.default_rng(4)
    gy = rng.standard_normal((3, 50)).astype(dtype)
    mask = rng.random((3, 50)) < 1 - p
    gx = sim.dropout_backward(gy, mask, p)
    assert launches == ["dropout_backward_kernel"]
    assert gx.dtype == gy.dtype and gx.shape == gy.shape
    expected = np.where(mask, gy.astype(np.float64) / (1 - p), 0.0)  # independent float64 reference
    np.testing.assert_allclose(gx, expected, rtol=TOL[dtype]["rtol"] * 4, atol=0)
    np.testing.assert_array_equal(gx, ref.dropout_backward(gy, mask, p))


def test_dropout_on_uncovered_layouts_falls_back(sim, ref, launches):
    x = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    gy = np.broadcast_to(np.float32(2.0), (4, 6))  # what a sum's backward hands over
    for backend in (sim, ref):
        backend.seed(9)
    (y, mask), (y_ref, mask_ref) = sim.dropout(x.T, 0.5), ref.dropout(x.T, 0.5)
    np.testing.assert_array_equal(mask, mask_ref)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(sim.dropout_backward(gy, mask, 0.5), ref.dropout_backward(gy, mask, 0.5))
    half = x.astype(np.float16)
    np.testing.assert_array_equal(sim.dropout_backward(half, mask.T, 0.5), ref.dropout_backward(half, mask.T, 0.5))
    assert launches == []
