"""affine_grid and grid_sample against PyTorch: values and gradients (input, grid, theta) over shapes, modes,
padding modes, align_corners and dtypes, and non-finite grids (values only: PyTorch's border / reflection
backward crashes on a NaN grid)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from tests.helpers import as_np

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
SETTINGS = settings(max_examples=40, deadline=None)
MODES = st.sampled_from(["bilinear", "nearest", "bicubic"])
PADS = st.sampled_from(["zeros", "border", "reflection"])


def _close(a, b, dtype, scale=1.0):
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, equal_nan=True)


@st.composite
def cases(draw):
    mode = draw(MODES)
    d = 2 if mode == "bicubic" else draw(st.sampled_from([2, 3]))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(d))
    out = tuple(draw(st.integers(1, 4)) for _ in range(d))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2 ** 16))
    spread = draw(st.sampled_from([0.9, 1.2, 3.0]))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c) + spatial).astype(dtype)
    grid = rng.uniform(-spread, spread, (n,) + out + (d,)).astype(dtype)
    if draw(st.booleans()):  # exact pixel centres, edges and fold points
        grid.ravel()[::2] = rng.choice([-1.0, 0.0, 1.0, 0.5, -0.5], grid.size)[::2]
    return mode, draw(PADS), draw(st.booleans()), x, grid


@SETTINGS
@given(cases())
def test_grid_sample_values_and_gradients_match_torch(case):
    mode, pad, ac, x, grid = case
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    mx, mg = mt.tensor(x, requires_grad=True), mt.tensor(grid, requires_grad=True)
    ty = torch.nn.functional.grid_sample(tx, tg, mode=mode, padding_mode=pad, align_corners=ac)
    my = F.grid_sample(mx, mg, mode=mode, padding_mode=pad, align_corners=ac)
    assert tuple(my.shape) == tuple(ty.shape) and as_np(my).dtype == x.dtype
    _close(as_np(my), ty.detach().numpy(), x.dtype)
    w = np.random.default_rng(0).standard_normal(tuple(ty.shape)).astype(x.dtype)
    (ty * torch.tensor(w)).sum().backward()
    (my * mt.tensor(w)).sum().backward()
    _close(as_np(mx.grad), tx.grad.numpy(), x.dtype)
    _close(as_np(mg.grad), tg.grad.numpy(), x.dtype, scale=10.0 * max(x.shape[2:]))


@SETTINGS
@given(st.sampled_from([4, 5]), st.booleans(), st.integers(0, 2 ** 16), st.integers(1, 4), st.integers(1, 4))
def test_affine_grid_matches_torch(dims, ac, seed, h, w):
    rng = np.random.default_rng(seed)
    d = dims - 2
    theta = rng.standard_normal((2, d, d + 1))
    size = (2, 3) + ((h, w) if d == 2 else (h, w, h))
    tt, mth = torch.tensor(theta, requires_grad=True), mt.tensor(theta, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unit-size grids with align_corners
        ty = torch.nn.functional.affine_grid(tt, size, align_corners=ac)
        my = F.affine_grid(mth, size, align_corners=ac)
    _close(as_np(my), ty.detach().numpy(), np.float64)
    g = rng.standard_normal(tuple(ty.shape))
    (ty * torch.tensor(g)).sum().backward()
    (my * mt.tensor(g)).sum().backward()
    _close(as_np(mth.grad), tt.grad.numpy(), np.float64, scale=10.0)


@SETTINGS
@given(MODES, PADS, st.booleans(), st.integers(0, 2 ** 16), st.sampled_from([np.float32, np.float64]),
       st.booleans())
def test_nonfinite_grids_and_inputs_match_torch_values(mode, pad, ac, seed, dtype, volumetric):
    rng = np.random.default_rng(seed)
    volumetric = volumetric and mode != "bicubic"
    x = rng.standard_normal((1, 2, 2, 3, 4) if volumetric else (1, 2, 3, 4)).astype(dtype)
    x.ravel()[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan])
    grid = rng.uniform(-1.5, 1.5, (1, 2, 3, 3, 3) if volumetric else (1, 3, 3, 2)).astype(dtype)
    grid.ravel()[rng.integers(0, grid.size, 4)] = rng.choice([np.inf, -np.inf, np.nan], 4)
    ty = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(grid), mode=mode, padding_mode=pad,
                                         align_corners=ac)
    my = F.grid_sample(mt.tensor(x), mt.tensor(grid), mode=mode, padding_mode=pad, align_corners=ac)
    _close(as_np(my), ty.numpy(), dtype)


def test_the_spatial_transformer_tutorial_step():
    """PyTorch's Spatial Transformer Networks tutorial: theta from a localisation net, affine_grid, grid_sample
    with the defaults (and their warning), trained end to end."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 1, 6, 6)).astype(np.float32)
    theta = (np.tile(np.eye(2, 3), (2, 1, 1)) + 0.1 * rng.standard_normal((2, 2, 3))).astype(np.float32)
    outs = []
    for lib, tensor in ((torch, torch.tensor), (mt, mt.tensor)):
        t = tensor(theta, requires_grad=True)
        fn = torch.nn.functional if lib is torch else F
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            grid = fn.affine_grid(t, (2, 1, 6, 6))
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            y = fn.grid_sample(tensor(x), grid)
        (y ** 2).sum().backward()
        outs.append((y.detach().numpy(), t.grad.numpy()))
    _close(outs[1][0], outs[0][0], np.float32)
    _close(outs[1][1], outs[0][1], np.float32, scale=10.0)
