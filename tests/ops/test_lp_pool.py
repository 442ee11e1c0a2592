"""lp_pool1d/2d/3d and nn.LPPool1d/2d/3d against float64 loops of PyTorch's rule: (prod(kernel) * mean of
x**p over the window) ** (1/p), the mean over the window clipped to the input in ceil mode; p = inf the max
of |x|, -inf its min. Gradients by finite differences, zero gradient for a window whose sum is zero, and
parity with PyTorch."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn
from minitensor.testing import gradcheck

LP = {1: F.lp_pool1d, 2: F.lp_pool2d, 3: F.lp_pool3d}


def out_len(size, k, s, ceil_mode):
    n = (size - k + (s - 1 if ceil_mode else 0)) // s + 1
    return n - 1 if ceil_mode and (n - 1) * s >= size else n


def lp_ref(x, p, kernel, stride, ceil_mode):
    """Loops over (N, C, *spatial) windows."""
    dims = len(kernel)
    spatial = x.shape[2:]
    outs = [out_len(spatial[a], kernel[a], stride[a], ceil_mode) for a in range(dims)]
    y = np.zeros(x.shape[:2] + tuple(outs))
    for pos in itertools.product(*(range(o) for o in outs)):
        box = tuple(slice(pos[a] * stride[a], min(pos[a] * stride[a] + kernel[a], spatial[a])) for a in range(dims))
        window = x[(Ellipsis,) + box].reshape(x.shape[:2] + (-1,))
        if p == math.inf:
            y[(Ellipsis,) + pos] = np.abs(window).max(-1)
        elif p == -math.inf:
            y[(Ellipsis,) + pos] = np.abs(window).min(-1)
        else:
            cells = window.shape[-1]
            with np.errstate(invalid="ignore"):
                y[(Ellipsis,) + pos] = np.power(math.prod(kernel) * (window ** p).sum(-1) / cells, 1 / p)
    return y


CASES = [(1, (2, 3, 11), (3,), (2,), False), (1, (2, 3, 10), (4,), (3,), True),
         (2, (2, 3, 7, 9), (2, 3), (2, 3), False), (2, (1, 2, 8, 7), (3, 2), (2, 2), True),
         (3, (1, 2, 5, 6, 7), (2, 3, 2), (2, 2, 3), False), (3, (2, 1, 7, 5, 6), (3, 2, 2), (2, 2, 2), True)]


@pytest.mark.parametrize("dims, shape, kernel, stride, ceil_mode", CASES)
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 1.5, math.inf, -math.inf])
def test_values_match_loops(dims, shape, kernel, stride, ceil_mode, p):
    x = np.random.default_rng(0).standard_normal(shape)
    got = LP[dims](mt.tensor(x), p, kernel, stride, ceil_mode).numpy()
    np.testing.assert_allclose(got, lp_ref(x, p, kernel, stride, ceil_mode), rtol=1e-12, atol=1e-12)
    # unbatched, module, stride None = the kernel
    module = (nn.LPPool1d, nn.LPPool2d, nn.LPPool3d)[dims - 1](p, kernel, ceil_mode=ceil_mode)
    np.testing.assert_allclose(module(mt.tensor(x[0])).numpy(), lp_ref(x, p, kernel, kernel, ceil_mode)[0],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dims, shape, kernel, stride, ceil_mode", CASES)
def test_gradcheck(dims, shape, kernel, stride, ceil_mode):
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.uniform(0.5, 2.0, shape), requires_grad=True)  # positive: x**1.5 is smooth
    for p in (2.0, 1.5):
        assert gradcheck(lambda t, p=p: LP[dims](t, p, kernel, stride, ceil_mode), [x])
    signed = mt.tensor(rng.standard_normal(shape) + 3 * np.sign(rng.standard_normal(shape)), requires_grad=True)
    assert gradcheck(lambda t: LP[dims](t, 3, kernel, stride, ceil_mode) ** 3, [signed])  # odd p: signs pass
    assert gradcheck(lambda t: LP[dims](t, math.inf, kernel, stride, ceil_mode), [signed])


def test_a_window_of_zeros_gets_zero_gradient():
    x = mt.tensor([[[[0.0, 0.0, 1.0, 2.0], [0.0, 0.0, 3.0, 4.0]]]], dtype=mt.float64, requires_grad=True)
    F.lp_pool2d(x, 2, 2).sum().backward()
    g = x.grad.numpy()
    assert np.all(g[..., :2] == 0) and np.all(np.isfinite(g))
    np.testing.assert_allclose(g[0, 0, :, 2:], np.array([[1.0, 2.0], [3.0, 4.0]]) / 30 ** 0.5, rtol=1e-12)  # x / y


def test_integers_as_pytorch():
    """int64 in 1-D and 2-D: x**2 stays int64 and the window mean truncates before the 1/p power."""
    x = np.array([[[[3, -2, 1, 1], [0, 1, 2, 2]]]])
    got = F.lp_pool2d(mt.tensor(x), 2, 2)
    assert got.dtype == mt.float32
    np.testing.assert_allclose(got.numpy(), [[[[np.sqrt(4 * (14 // 4)), np.sqrt(4 * (10 // 4))]]]], rtol=1e-6)
    np.testing.assert_allclose(F.lp_pool1d(mt.tensor(x[0, 0]), 2, 2).numpy(), np.sqrt(2 * (np.array(
        [[13, 2], [1, 8]]) // 2)), rtol=1e-6)


def test_modules_and_errors():
    assert repr(nn.LPPool2d(2, 3, stride=2)) == "LPPool2d(norm_type=2, kernel_size=3, stride=2, ceil_mode=False)"
    assert repr(nn.LPPool3d(1.5, (2, 2, 1))) == \
        "LPPool3d(norm_type=1.5, kernel_size=(2, 2, 1), stride=None, ceil_mode=False)"
    with pytest.raises(RuntimeError, match="floating point"):  # PyTorch's avg_pool3d refuses integers too
        F.lp_pool3d(mt.ones(1, 1, 4, 4, 4, dtype=mt.int64), 2, 2)
    with pytest.raises(RuntimeError, match="kernel_size must be an int or a tuple of 3 ints"):
        F.lp_pool3d(mt.ones(1, 1, 4, 4, 4), 2, (2, 2))
    with pytest.raises(RuntimeError, match="3D .unbatched. or 4D"):
        F.lp_pool2d(mt.ones(4, 4), 2, 2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.lp_pool2d(mt.ones(1, 1, 4, 4), 2, 5)


@pytest.mark.torch
@pytest.mark.parametrize("dims, shape, kernel, stride, ceil_mode", CASES)
@pytest.mark.parametrize("p", [2, 1.5, 3.0, math.inf, -math.inf])
def test_against_torch(dims, shape, kernel, stride, ceil_mode, p):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape)
    x.reshape(-1)[:4] = 0.0  # a zero window: gradient zero on both sides
    t_x, m_x = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    if dims == 1:  # PyTorch's lp_pool1d multiplies by kernel_size itself: an int
        kernel, stride = kernel[0], stride[0]
    t_layer = (torch.nn.LPPool1d, torch.nn.LPPool2d, torch.nn.LPPool3d)[dims - 1](p, kernel, stride, ceil_mode)
    m_layer = (nn.LPPool1d, nn.LPPool2d, nn.LPPool3d)[dims - 1](p, kernel, stride, ceil_mode)
    t_y, m_y = t_layer(t_x), m_layer(m_x)
    np.testing.assert_allclose(m_y.detach().numpy(), t_y.detach().numpy(), rtol=1e-12, atol=1e-14)
    g = rng.standard_normal(tuple(t_y.shape))
    torch.nan_to_num(t_y * torch.tensor(g)).sum().backward()
    mt.nan_to_num(m_y * mt.tensor(g)).sum().backward()
    np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert repr(m_layer) == repr(t_layer)
    if p != math.inf and p != -math.inf and dims < 3:  # integers: truncating means, as PyTorch
        ints = rng.integers(-5, 6, shape)
        np.testing.assert_allclose(m_layer(mt.tensor(ints)).numpy(), t_layer(torch.tensor(ints)).numpy(),
                                   rtol=1e-6, equal_nan=True)


def test_onnx_export_names_the_unsupported_poolings():
    pytest.importorskip("onnx")
    from minitensor.onnx.errors import UnsupportedOperatorError

    for module, shape, op in [(nn.LPPool2d(2, 2), (1, 2, 4, 4), "lp_pool2d"),
                              (nn.LPPool1d(2, 2), (1, 2, 4), "lp_pool1d"),
                              (nn.LPPool3d(2, 2), (1, 2, 4, 4, 4), "lp_pool3d"),
                              (nn.AdaptiveMaxPool3d(2), (1, 2, 4, 4, 4), "AdaptiveMaxPool3d"),
                              (nn.FractionalMaxPool2d(2, output_size=3), (1, 2, 7, 7), "FractionalMaxPool2d"),
                              (nn.FractionalMaxPool3d(2, output_size=2), (1, 2, 5, 5, 5), "FractionalMaxPool3d")]:
        with pytest.raises(UnsupportedOperatorError, match=f"'minitensor::{op}' to ONNX opset version"):
            mt.onnx.export(module, (mt.randn(*shape),), None)
