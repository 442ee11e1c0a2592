"""adaptive_max_pool1d/2d and nn.AdaptiveMaxPool1d/2d: values and indices against float64 loops over PyTorch's
adaptive windows (ties: the first max in scan order; NaN: the last NaN), gradients sent to the indices, on
every backend, and against PyTorch when installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn
from minitensor.backends import get_backend
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=30, deadline=None)


def windows(size, out):
    """PyTorch's adaptive windows [floor(i*size/out), ceil((i+1)*size/out))."""
    return [(i * size // out, math.ceil((i + 1) * size / out)) for i in range(out)]


def adaptive_max_ref(x, out_hw):
    """(y, indices) by loops: scan each window row by row; a larger value, or any NaN, takes the place."""
    n, c, h, w = x.shape
    y, idx = np.zeros((n, c) + out_hw), np.zeros((n, c) + out_hw, dtype=np.int64)
    for b, ch in np.ndindex(n, c):
        for i, (r0, r1) in enumerate(windows(h, out_hw[0])):
            for j, (c0, c1) in enumerate(windows(w, out_hw[1])):
                best, where = -np.inf, r0 * w + c0
                for r in range(r0, r1):
                    for q in range(c0, c1):
                        v = x[b, ch, r, q]
                        if v > best or np.isnan(v):
                            best, where = v, r * w + q
                y[b, ch, i, j], idx[b, ch, i, j] = best, where
    return y, idx


@st.composite
def cases(draw):
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 9)), draw(st.integers(1, 9)))
    return shape, (draw(st.integers(1, 6)), draw(st.integers(1, 6))), draw(st.booleans())


def values(rng, shape, with_nan):
    """Small integers (many ties), with a few NaNs when asked."""
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if with_nan:
        x[rng.random(shape) < 0.1] = np.nan
    return x


@SETTINGS
@given(cases(), st.integers(0, 2**31 - 1))
def test_backend_adaptive_max_pool_matches_loops(case, seed):
    shape, out_hw, with_nan = case
    x = values(np.random.default_rng(seed), shape, with_nan)
    want_y, want_i = adaptive_max_ref(x, out_hw)
    for B in [get_backend("cpu")] + ([get_backend("cuda")] if mt.cuda.is_available() else []):
        y, idx = B.adaptive_max_pool2d(B.asarray(x), out_hw)
        np.testing.assert_array_equal(B.to_numpy(y), want_y)
        np.testing.assert_array_equal(B.to_numpy(idx), want_i)
        assert B.to_numpy(idx).dtype == np.int64
        assert B.to_numpy(B.adaptive_max_pool2d(B.asarray(x.astype(np.float32)), out_hw)[0]).dtype == np.float32


@SETTINGS
@given(cases(), st.integers(0, 2**31 - 1))
def test_gradient_goes_to_the_indices(case, seed):
    shape, out_hw, _ = case
    rng = np.random.default_rng(seed)
    x = mt.tensor(values(rng, shape, False), requires_grad=True)
    y, idx = F.adaptive_max_pool2d(x, out_hw, return_indices=True)
    gy = rng.standard_normal(tuple(y.shape))
    (y * mt.tensor(gy)).sum().backward()
    want = np.zeros(shape)
    for pos in np.ndindex(gy.shape):  # overlapping windows may share a max: their gradients add
        want[pos[0], pos[1]].flat[idx.numpy()[pos]] += gy[pos]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-12)


def test_gradcheck_1d_2d_unbatched_and_modules():
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((2, 3, 7, 6)), requires_grad=True)  # distinct values: no ties
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 4)), [x])
    line = mt.tensor(rng.standard_normal((3, 10)), requires_grad=True)
    assert gradcheck(lambda t: F.adaptive_max_pool1d(t, 4), [line])
    y, idx = nn.AdaptiveMaxPool1d(4, return_indices=True)(line)
    want_y, want_i = adaptive_max_ref(line.detach().numpy()[None, :, None, :], (1, 4))
    np.testing.assert_array_equal(y.detach().numpy(), want_y[0, :, 0])
    np.testing.assert_array_equal(idx.numpy(), want_i[0, :, 0])
    y2 = nn.AdaptiveMaxPool2d((2, None))(x[0])
    assert y2.shape == (3, 2, 6)
    np.testing.assert_array_equal(y2.detach().numpy(), adaptive_max_ref(x.detach().numpy(), (2, 6))[0][0])
    assert repr(nn.AdaptiveMaxPool2d((3, None), return_indices=True)) == "AdaptiveMaxPool2d(output_size=(3, None))"
    assert F.adaptive_max_pool2d(mt.ones(1, 1, 3, 3), 1).dtype == mt.float32


def test_errors():
    with pytest.raises(RuntimeError, match="floating point"):
        F.adaptive_max_pool2d(mt.ones(1, 1, 3, 3, dtype=mt.int64), 2)
    with pytest.raises(RuntimeError, match="output_size must be an int or a pair"):
        F.adaptive_max_pool2d(mt.ones(1, 1, 3, 3), (1, 2, 3))
    with pytest.raises(RuntimeError, match="3D .unbatched. or 4D"):
        F.adaptive_max_pool2d(mt.ones(3, 3), 2)


@pytest.mark.torch
@pytest.mark.parametrize("shape, out", [((2, 3, 7, 5), (3, 2)), ((1, 2, 5, 5), (8, 3)), ((3, 10, 9), (4, None))])
def test_against_torch(shape, out):
    torch = pytest.importorskip("torch")
    x = values(np.random.default_rng(5), shape, True)
    t_x, m_x = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    t_y, t_i = torch.nn.functional.adaptive_max_pool2d(t_x, out, return_indices=True)
    m_y, m_i = F.adaptive_max_pool2d(m_x, out, return_indices=True)
    np.testing.assert_array_equal(m_y.detach().numpy(), t_y.detach().numpy())
    np.testing.assert_array_equal(m_i.numpy(), t_i.numpy())
    g = np.random.default_rng(6).standard_normal(tuple(t_y.shape))
    (t_y * torch.tensor(g)).sum().backward()  # NaN outputs still pass gradient g
    (m_y * mt.tensor(g)).sum().backward()  # NaN outputs still pass gradient g
    np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-12)
