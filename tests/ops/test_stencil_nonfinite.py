"""A NaN or inf in ``interpolate`` (linear, bilinear, bicubic, trilinear, area) and ``adaptive_avg_pool{1,2,3}d``
spoils only the outputs whose stencil holds it (PyTorch's kernels read each output's own taps, zero-weight taps
included), forward and backward; the backend's ``axis_stencil`` against loops; a torch twin of the NaN masks."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.backends.cpu.backend import NumpyBackend
from minitensor.testing import gradcheck

from helpers import FEW, randn, seeds

MODES = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "area": 2}


def source(o: int, n_in: int, n_out: int, align_corners: bool) -> float:
    if align_corners:
        return o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return (o + 0.5) * n_in / n_out - 0.5


def readers(mode: str, n_in: int, n_out: int, p: int, align_corners: bool) -> np.ndarray:
    """The outputs along one axis whose stencil reads input p, from the source coordinates (PyTorch's rules)."""
    hit = np.zeros(n_out, dtype=bool)
    for o in range(n_out):
        if mode == "area":
            hit[o] = o * n_in // n_out <= p < -(-(o + 1) * n_in // n_out)
        elif mode == "bicubic":
            f = math.floor(source(o, n_in, n_out, align_corners))
            hit[o] = p in {min(max(f + d, 0), n_in - 1) for d in (-1, 0, 1, 2)}
        elif n_in == n_out:
            hit[o] = o == p
        else:
            f = min(math.floor(max(source(o, n_in, n_out, align_corners), 0.0)), n_in - 1)
            hit[o] = p in (f, min(f + 1, n_in - 1))
    return hit


def expected_mask(mode: str, shape: tuple[int, ...], size: tuple[int, ...], pos: tuple[int, ...],
                  align_corners: bool) -> np.ndarray:
    """The outputs a non-finite input at (n, c, *pos) spoils: the product of the per-axis readers."""
    mask = np.ones((), dtype=bool)
    for n_in, n_out, p in zip(shape[2:], size, pos[2:]):
        mask = np.multiply.outer(mask, readers(mode, n_in, n_out, p, align_corners))
    full = np.zeros(shape[:2] + tuple(size), dtype=bool)
    full[pos[:2]] = mask
    return full


def resample(mode: str, x: mt.Tensor, size: tuple[int, ...], align_corners: bool) -> mt.Tensor:
    return F.interpolate(x, size=size, mode=mode, align_corners=None if mode == "area" else align_corners)


@FEW
@given(mode=st.sampled_from(sorted(MODES)), data=st.data(), align_corners=st.booleans(), seed=seeds,
       bad=st.sampled_from([math.nan, math.inf, -math.inf]))
def test_a_non_finite_input_spoils_only_its_stencil(mode, data, align_corners, seed, bad):
    dims = MODES[mode]
    shape = (2, 2) + tuple(data.draw(st.integers(1, 7)) for _ in range(dims))
    size = tuple(data.draw(st.integers(1, 9)) for _ in range(dims))
    pos = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
    x = randn(seed, shape)
    x[pos] = 0.0
    clean = resample(mode, mt.tensor(x), size, align_corners).numpy()
    x[pos] = bad
    y = resample(mode, mt.tensor(x), size, align_corners).numpy()
    spoiled = expected_mask(mode, shape, size, pos, align_corners)
    assert np.array_equal(~np.isfinite(y), spoiled)
    np.testing.assert_allclose(y[~spoiled], clean[~spoiled], rtol=1e-12, atol=1e-12)


@FEW
@given(mode=st.sampled_from(sorted(MODES)), data=st.data(), align_corners=st.booleans(), seed=seeds)
def test_a_nan_gradient_reaches_only_the_inputs_of_its_stencil(mode, data, align_corners, seed):
    dims = MODES[mode]
    shape = (1, 2) + tuple(data.draw(st.integers(1, 6)) for _ in range(dims))
    size = tuple(data.draw(st.integers(1, 8)) for _ in range(dims))
    out = data.draw(st.tuples(*(st.integers(0, s - 1) for s in (1, 2) + size)))
    x = mt.tensor(randn(seed, shape), requires_grad=True)
    gy = randn(seed + 1, (1, 2) + size)
    gy[out] = math.nan
    resample(mode, x, size, align_corners).backward(mt.tensor(gy))
    assert x.grad is not None
    reached = np.array([expected_mask(mode, shape, size, p, align_corners)[out] for p in np.ndindex(*shape)])
    if mode == "bicubic" and size == shape[2:]:  # PyTorch's bicubic backward copies gy when no size changes
        reached = np.array([p == out for p in np.ndindex(*shape)])
    assert np.array_equal(np.isnan(x.grad.numpy()), reached.reshape(shape))


@pytest.mark.parametrize("pool, dims", [(F.adaptive_avg_pool1d, 1), (F.adaptive_avg_pool2d, 2),
                                        (F.adaptive_avg_pool3d, 3)])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_adaptive_avg_pool_later_windows_stay_finite(pool, dims, bad):
    shape, out = (1, 1) + (7,) * dims, (3,) * dims
    x = randn(0, shape)
    x[(0, 0) + (1,) * dims] = bad  # in the first window of every axis only
    y = pool(mt.tensor(x), out).numpy()
    spoiled = expected_mask("area", shape, out, (0, 0) + (1,) * dims, False)
    assert np.array_equal(~np.isfinite(y), spoiled) and spoiled.sum() == 1
    assert np.isnan(y).sum() == (1 if math.isnan(bad) else 0)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("align_corners", [False, True])
def test_gradients_match_finite_differences(mode, align_corners):
    shape = (1, 2) + (4, 5, 3)[:MODES[mode]]
    size = (7, 3, 3)[:MODES[mode]]
    x = mt.tensor(randn(3, shape), requires_grad=True)
    assert gradcheck(lambda t: resample(mode, t, size, align_corners), (x,))
    if mode == "area":
        assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, (3, 2)), (x,))


def test_axis_stencil_matches_loops():
    """The backend methods against their definitions: y[o] = sum of the valid taps' weight * x, and the
    backward's gx[j] = sum over the taps reading j of weight * gy[o]."""
    B = NumpyBackend()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 3))
    index, weight = rng.integers(0, 6, (4, 3)), rng.standard_normal((4, 3))
    valid = rng.random((4, 3)) < 0.7
    y = B.axis_stencil(x, 1, index, weight, valid)
    ref = np.stack([sum(weight[o, k] * x[:, index[o, k]] for k in range(3) if valid[o, k]) + 0 * x[:, 0]
                    for o in range(4)], 1)
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)
    gy = rng.standard_normal((2, 4, 3))
    gx = B.axis_stencil_backward(gy, 1, index, weight, valid, 6)
    ref_gx = np.zeros_like(x)
    for o, k in np.ndindex(4, 3):
        if valid[o, k]:
            ref_gx[:, index[o, k]] += weight[o, k] * gy[:, o]
    np.testing.assert_allclose(gx, ref_gx, rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("mode", sorted(MODES) + ["adaptive1d", "adaptive3d"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_masks_and_values_match_torch(mode, bad):
    torch = pytest.importorskip("torch")
    dims = {"adaptive1d": 1, "adaptive3d": 3}.get(mode, MODES.get(mode))
    rng = np.random.default_rng(1)
    for trial in range(12):
        shape = (2, 2) + tuple(int(v) for v in rng.integers(1, 7, dims))
        size = tuple(int(v) for v in rng.integers(1, 9, dims))
        ac = bool(trial % 2) if mode in ("linear", "bilinear", "bicubic", "trilinear") else None
        x = rng.standard_normal(shape)
        x[tuple(int(rng.integers(0, s)) for s in shape)] = bad
        gy = rng.standard_normal(shape[:2] + size)
        gy[tuple(int(rng.integers(0, s)) for s in gy.shape)] = math.nan
        results = []
        for lib, fn in ((torch, torch.nn.functional), (mt, F)):
            t = lib.tensor(x, requires_grad=True)
            if mode.startswith("adaptive"):
                y = getattr(fn, f"adaptive_avg_pool{dims}d")(t, size)
            else:
                y = fn.interpolate(t, size=size, mode=mode, align_corners=ac)
            y.backward(lib.tensor(gy))
            results.append((y.detach().numpy(), t.grad.numpy()))
        for theirs, ours in zip(*results):
            assert np.array_equal(np.isnan(ours), np.isnan(theirs)), (mode, shape, size, ac)
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)  # infs equal, finite values close
