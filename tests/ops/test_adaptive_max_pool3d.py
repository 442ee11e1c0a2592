"""adaptive_max_pool3d and nn.AdaptiveMaxPool3d: values and flat D*H*W indices against float64 loops over
PyTorch's adaptive windows (ties: the first max in (d, h, w) scan order; NaN: the last NaN), gradients sent
to the indices (ties included), unbatched inputs, errors, the *_with_indices names, and PyTorch parity."""
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

SETTINGS = settings(max_examples=25, deadline=None)


def windows(size, out):
    """PyTorch's adaptive windows [floor(i*size/out), ceil((i+1)*size/out))."""
    return [(i * size // out, math.ceil((i + 1) * size / out)) for i in range(out)]


def adaptive_max3d_ref(x, out):
    """(y, indices) by loops over (d, h, w) in scan order: a larger value, or any NaN, takes the place."""
    n, c, d, h, w = x.shape
    y, idx = np.zeros((n, c) + out), np.zeros((n, c) + out, dtype=np.int64)
    for b, ch in np.ndindex(n, c):
        for i, (d0, d1) in enumerate(windows(d, out[0])):
            for j, (r0, r1) in enumerate(windows(h, out[1])):
                for k, (c0, c1) in enumerate(windows(w, out[2])):
                    best, where = -np.inf, (d0 * h + r0) * w + c0
                    for p in range(d0, d1):
                        for r in range(r0, r1):
                            for q in range(c0, c1):
                                v = x[b, ch, p, r, q]
                                if v > best or np.isnan(v):
                                    best, where = v, (p * h + r) * w + q
                    y[b, ch, i, j, k], idx[b, ch, i, j, k] = best, where
    return y, idx


def values(rng, shape, with_nan):
    """Small integers (many ties), with a few NaNs when asked."""
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if with_nan:
        x[rng.random(shape) < 0.1] = np.nan
    return x


@st.composite
def cases(draw):
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *(draw(st.integers(1, 6)) for _ in range(3)))
    return shape, tuple(draw(st.integers(1, 5)) for _ in range(3)), draw(st.booleans())


@SETTINGS
@given(cases(), st.integers(0, 2**31 - 1))
def test_backend_adaptive_max_pool3d_matches_loops(case, seed):
    shape, out, with_nan = case
    x = values(np.random.default_rng(seed), shape, with_nan)
    want_y, want_i = adaptive_max3d_ref(x, out)
    for B in [get_backend("cpu")] + ([get_backend("cuda")] if mt.cuda.is_available() else []):
        y, idx = B.adaptive_max_pool3d(B.asarray(x), out)
        np.testing.assert_array_equal(B.to_numpy(y), want_y)
        np.testing.assert_array_equal(B.to_numpy(idx), want_i)
        assert B.to_numpy(idx).dtype == np.int64
    y, idx = F.adaptive_max_pool3d(mt.tensor(x), out, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), want_y)
    np.testing.assert_array_equal(idx.numpy(), want_i)


@SETTINGS
@given(cases(), st.integers(0, 2**31 - 1))
def test_gradient_goes_to_the_indices_ties_included(case, seed):
    shape, out, _ = case
    rng = np.random.default_rng(seed)
    x = mt.tensor(values(rng, shape, False), requires_grad=True)
    y, idx = F.adaptive_max_pool3d(x, out, return_indices=True)
    gy = rng.standard_normal(tuple(y.shape))
    (y * mt.tensor(gy)).sum().backward()
    want = np.zeros(shape)
    for pos in np.ndindex(gy.shape):  # overlapping windows may share a max: their gradients add
        want[pos[0], pos[1]].flat[adaptive_max3d_ref(x.detach().numpy(), out)[1][pos]] += gy[pos]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(idx.numpy(), adaptive_max3d_ref(x.detach().numpy(), out)[1])


def test_gradcheck_unbatched_none_sizes_and_module():
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((2, 2, 5, 4, 6)), requires_grad=True)  # distinct values: no ties
    assert gradcheck(lambda t: F.adaptive_max_pool3d(t, (2, 3, 4)), [x])
    assert gradcheck(lambda t: F.adaptive_max_pool3d(t, (7, 5, 2)), [x])  # growing: overlapping windows
    single = x[0].detach().requires_grad_()
    y, idx = nn.AdaptiveMaxPool3d((3, None, 2), return_indices=True)(single)
    assert y.shape == idx.shape == (2, 3, 4, 2)
    want_y, want_i = adaptive_max3d_ref(single.detach().numpy()[None], (3, 4, 2))
    np.testing.assert_array_equal(y.detach().numpy(), want_y[0])
    np.testing.assert_array_equal(idx.numpy(), want_i[0])
    assert gradcheck(lambda t: nn.AdaptiveMaxPool3d(2)(t), [single])
    assert repr(nn.AdaptiveMaxPool3d((3, None, 2))) == "AdaptiveMaxPool3d(output_size=(3, None, 2))"
    assert F.adaptive_max_pool3d(mt.ones(1, 1, 3, 3, 3), 1).dtype == mt.float32
    assert F.adaptive_max_pool3d(x, (0, 2, 2)).shape == (2, 2, 0, 2, 2)  # an empty output, as PyTorch
    assert F.adaptive_max_pool3d(x[:0], 2).shape == (0, 2, 2, 2, 2)


def test_with_indices_names_always_return_both():
    x = mt.tensor(np.random.default_rng(1).standard_normal((1, 2, 4, 5, 6)))
    for pair in (F.adaptive_max_pool3d_with_indices(x, 2), F.adaptive_max_pool2d_with_indices(x[0], 2),
                 F.adaptive_max_pool1d_with_indices(x[0, 0], 2), F.max_pool3d_with_indices(x, 2),
                 F.max_pool2d_with_indices(x[0], 2), F.max_pool1d_with_indices(x[0, 0], 2)):
        assert isinstance(pair, tuple) and len(pair) == 2 and pair[1].dtype == mt.int64
    np.testing.assert_array_equal(F.max_pool2d_with_indices(x[0], 2)[1].numpy(),
                                  F.max_pool2d(x[0], 2, return_indices=True)[1].numpy())


def test_errors():
    with pytest.raises(RuntimeError, match="floating point"):
        F.adaptive_max_pool3d(mt.ones(1, 1, 3, 3, 3, dtype=mt.int64), 2)
    with pytest.raises(RuntimeError, match="output_size must be an int or 3 ints"):
        F.adaptive_max_pool3d(mt.ones(1, 1, 3, 3, 3), (1, 2))
    with pytest.raises(RuntimeError, match="at least 0"):
        F.adaptive_max_pool3d(mt.ones(1, 1, 3, 3, 3), (-1, 2, 2))
    with pytest.raises(RuntimeError, match="4D .unbatched. or 5D"):
        F.adaptive_max_pool3d(mt.ones(3, 3, 3), 2)
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions.*dimension 2 being empty"):
        F.adaptive_max_pool3d(mt.ones(1, 1, 0, 3, 3), 2)


@pytest.mark.torch
@pytest.mark.parametrize("shape, out", [((2, 3, 7, 5, 4), (3, 2, 4)), ((1, 2, 3, 5, 5), (8, 3, 1)),
                                        ((3, 6, 9, 4), (4, None, 3))])
def test_against_torch(shape, out):
    torch = pytest.importorskip("torch")
    x = values(np.random.default_rng(5), shape, True)
    t_x, m_x = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    t_y, t_i = torch.nn.functional.adaptive_max_pool3d(t_x, out, return_indices=True)
    m_y, m_i = nn.AdaptiveMaxPool3d(out, return_indices=True)(m_x)
    np.testing.assert_array_equal(m_y.detach().numpy(), t_y.detach().numpy())
    np.testing.assert_array_equal(m_i.numpy(), t_i.numpy())
    g = np.random.default_rng(6).standard_normal(tuple(t_y.shape))
    (t_y * torch.tensor(g)).sum().backward()
    (m_y * mt.tensor(g)).sum().backward()
    np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-12)
