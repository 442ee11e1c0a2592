"""Pooling: max (values and PyTorch's indices), average (PyTorch's divisor rules) and adaptive average,
against naive float64 loops; gradients by finite differences; repeated indices; dtypes; errors."""
from __future__ import annotations

import math
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.backends import get_backend
from minitensor.backends.cpu import conv as cpu_conv
from minitensor.backends.cpu import numba_kernels
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=40, deadline=None)


# ------------------------------------------------------------------------------ naive references
def out_len(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    n = (math.ceil(span / s) if ceil_mode else span // s) + 1
    if ceil_mode and (n - 1) * s >= size + p:
        n -= 1
    return n


def max_pool_ref(x, k, s, p, d, ceil_mode):
    """PyTorch's CPU loop: scan the window's in-bounds cells row by row; take a cell when it is greater
    than the running max or NaN; the index starts at the first in-bounds cell (-1 marks a window with
    no cell inside the input, possible with dilation, where PyTorch's index leaves the plane)."""
    n, c, h, w = x.shape
    oh, ow = out_len(h, k[0], s[0], p[0], d[0], ceil_mode), out_len(w, k[1], s[1], p[1], d[1], ceil_mode)
    y, idx = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow), dtype=np.int64)
    for b in range(n):
        for ch in range(c):
            for r in range(oh):
                for q in range(ow):
                    best, arg = -np.inf, -1
                    for i in range(k[0]):
                        for j in range(k[1]):
                            hh, ww = r * s[0] - p[0] + i * d[0], q * s[1] - p[1] + j * d[1]
                            if 0 <= hh < h and 0 <= ww < w:
                                v = x[b, ch, hh, ww]
                                if arg == -1:
                                    arg = hh * w + ww
                                if v > best or np.isnan(v):
                                    best, arg = v, hh * w + ww
                    y[b, ch, r, q], idx[b, ch, r, q] = best, arg
    return y, idx


def avg_pool_ref(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    n, c, h, w = x.shape
    oh, ow = out_len(h, k[0], s[0], p[0], 1, ceil_mode), out_len(w, k[1], s[1], p[1], 1, ceil_mode)
    y = np.zeros((n, c, oh, ow))
    for r in range(oh):
        for q in range(ow):
            h0, w0 = r * s[0] - p[0], q * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            pool_size = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            if divisor_override:
                divisor = divisor_override
            else:
                divisor = pool_size if count_include_pad else (h1 - h0) * (w1 - w0)
            y[:, :, r, q] = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3)) / divisor
    return y


def adaptive_ref(x, out):
    n, c, h, w = x.shape
    y = np.zeros((n, c) + tuple(out))
    for r in range(out[0]):
        for q in range(out[1]):
            h0, h1 = (r * h) // out[0], -(-((r + 1) * h) // out[0])
            w0, w1 = (q * w) // out[1], -(-((q + 1) * w) // out[1])
            y[:, :, r, q] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return y


def t64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def channels_last(a):
    """The same (N, C, H, W) values, laid out (N, H, W, C) in memory."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


@contextmanager
def cpu_paths(numba: bool):
    """The CPU backend with the Numba kernels on, or off as when numba is not installed."""
    with mock.patch.object(numba_kernels, "load", numba_kernels.load if numba else lambda *_: None):
        yield get_backend("cpu")


def distinct(shape, seed):
    """Values with gaps of at least 0.01 (a random permutation), so finite differences never cross a tie."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.prod(shape)).reshape(shape) * 0.01 - 1.0


@st.composite
def pool_cases(draw, dilation=True):
    k = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    p = (draw(st.integers(0, k[0] // 2)), draw(st.integers(0, k[1] // 2)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) if dilation else (1, 1)
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    ceil_mode = draw(st.booleans())
    # PyTorch's only rule: at least one output (in ceil mode a window may reach past the padded input)
    assume(min(out_len(h, k[0], s[0], p[0], d[0], ceil_mode), out_len(w, k[1], s[1], p[1], d[1], ceil_mode)) >= 1)
    return (draw(st.integers(1, 2)), draw(st.integers(1, 3)), h, w), k, s, p, d, ceil_mode


# ------------------------------------------------------------------------------ max pooling
@SETTINGS
@given(pool_cases(), st.integers(0, 2**31 - 1), st.sampled_from(["ties", "nan", "neg_inf"]))
def test_max_pool_values_and_indices_match_pytorch_rules(case, seed, data):
    shape, k, s, p, d, ceil_mode = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, shape).astype(np.float64)  # many ties: the first in scan order must win
    if data == "nan":
        x[rng.random(shape) < 0.2] = np.nan
    elif data == "neg_inf":
        x[rng.random(shape) < 0.5] = -np.inf
    y_ref, idx_ref = max_pool_ref(x, k, s, p, d, ceil_mode)
    y, idx = F.max_pool2d(t64(x), k, s, p, d, ceil_mode, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), y_ref)
    assert idx.dtype == mt.int64
    np.testing.assert_array_equal(idx.numpy(), idx_ref)


@SETTINGS
@given(pool_cases(), st.integers(0, 2**31 - 1), st.sampled_from(["ties", "nan", "neg_inf"]),
       st.sampled_from(["nchw", "channels_last"]), st.booleans())
def test_max_pool_cpu_paths_match_pytorch_rules(case, seed, data, gy_layout, numba):
    """A channels-last input through the Numba kernel (or, without it, NumPy): values and indices as the
    loops, channels-last results from the kernel, and a backward (gy in either layout) that scatters gy
    to the indices, overlapping windows adding up."""
    shape, k, s, p, d, ceil_mode = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, shape).astype(np.float64)
    if data == "nan":
        x[rng.random(shape) < 0.2] = np.nan
    elif data == "neg_inf":
        x[rng.random(shape) < 0.5] = -np.inf
    y_ref, idx_ref = max_pool_ref(x, k, s, p, d, ceil_mode)
    gy = rng.standard_normal(y_ref.shape)
    gx_ref = np.zeros_like(x)
    for b, ch, r, q in np.ndindex(*idx_ref.shape):
        if idx_ref[b, ch, r, q] >= 0:  # a window wholly in the padding sends its gradient nowhere
            gx_ref[b, ch].flat[idx_ref[b, ch, r, q]] += gy[b, ch, r, q]
    with cpu_paths(numba) as B:
        y, offsets = B.max_pool2d(channels_last(x), k, s, p, d, ceil_mode)
        idx = B.max_pool2d_indices(offsets, x.shape, k, s, p, d)
        gx = B.max_pool2d_backward(channels_last(gy) if gy_layout == "channels_last" else gy, offsets, x.shape,
                                   k, s, p, d)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(idx, idx_ref)
    assert idx.dtype == np.int64 and offsets.dtype == np.uint8  # the saved state: one byte per output
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-12)
    if numba and numba_kernels.load("pooling") is not None:  # the kernel ran (not NumPy): channels-last out
        assert cpu_conv.is_channels_last(y) and cpu_conv.is_channels_last(gx)


@pytest.mark.parametrize("layout", [np.ascontiguousarray, channels_last])
@pytest.mark.parametrize("numba", [True, False])
def test_max_pool_window_without_a_cell_inside(layout, numba):
    """Dilation 3 over two rows with padding 1: the taps of every window are rows -1 and 2, none inside.
    Every CPU path gives -inf and index -1 (the loops' marker), and its backward skips those windows."""
    x = layout(np.arange(16.0).reshape(1, 2, 2, 4))
    geometry = ((2, 2), (1, 1), (1, 1), (3, 1))
    with cpu_paths(numba) as B:
        y, offsets = B.max_pool2d(x, *geometry, False)
        idx = B.max_pool2d_indices(offsets, x.shape, *geometry)
        assert y.shape == (1, 2, 1, 5) and (y == -np.inf).all() and (idx == -1).all()
        gx = B.max_pool2d_backward(np.ones(y.shape), offsets, x.shape, *geometry)
    np.testing.assert_array_equal(gx, np.zeros(x.shape))


def test_max_pool_backward_through_a_window_in_the_padding():
    """Through autograd (the NumPy path for an NCHW input): windows wholly in the padding get no gradient,
    the others scatter as usual."""
    x = t64(np.arange(12.0).reshape(1, 1, 2, 6), True)
    y = F.max_pool2d(x, (2, 1), 1, (1, 0), (3, 1))
    assert y.shape == (1, 1, 1, 6) and (y.detach().numpy() == -np.inf).all()
    y.masked_fill(y.isinf(), 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((1, 1, 2, 6)))
    x2 = t64(np.arange(12.0).reshape(1, 1, 3, 4), True)
    z = F.max_pool2d(x2, 2, 1, 1, 2)  # taps at rows/cols -1 and 1, then 0 and 2: every window has a cell
    z.sum().backward()
    assert x2.grad.numpy().sum() == z.numel()


def test_max_pool_known_values():
    x = mt.arange(16.0).reshape(1, 1, 4, 4)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    assert y.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert idx.tolist() == [[[[5, 7], [13, 15]]]]


def test_max_pool_backward_scatters_to_the_indices():
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 2, (2, 3, 7, 6)).astype(np.float64)
    _, idx = max_pool_ref(x, (3, 2), (2, 1), (1, 1), (1, 2), True)
    gy = rng.standard_normal(idx.shape)
    gx_ref = np.zeros_like(x)
    for b, ch, r, q in np.ndindex(*idx.shape):
        gx_ref[b, ch].flat[idx[b, ch, r, q]] += gy[b, ch, r, q]
    B = get_backend("cpu")
    geometry = ((3, 2), (2, 1), (1, 1), (1, 2))
    for layout in (np.ascontiguousarray, channels_last):  # the NumPy scatter and the Numba kernel
        _, offsets = B.max_pool2d(layout(x), *geometry, True)
        gx = B.max_pool2d_backward(gy, offsets, x.shape, *geometry)
        np.testing.assert_allclose(gx, gx_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", [np.ascontiguousarray, channels_last])
@pytest.mark.parametrize("kernel, dtype", [((16, 16), np.uint8), ((17, 17), np.int32), ((1, 300), np.int32)])
def test_max_pool_offsets_are_narrow_and_widen_past_256_cells(layout, kernel, dtype):
    """The saved offset is uint8 up to 256 window cells and int32 beyond (the 257th cell has offset 256);
    values, indices and the backward are the loops' either way."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, kernel[0] + 2, kernel[1] + 1))
    geometry = (kernel, (1, 1), (0, 0), (1, 1))
    y_ref, idx_ref = max_pool_ref(x, *geometry, False)
    B = get_backend("cpu")
    y, offsets = B.max_pool2d(layout(x), *geometry, False)
    assert offsets.dtype == dtype
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(B.max_pool2d_indices(offsets, x.shape, *geometry), idx_ref)
    gy = rng.standard_normal(y.shape)
    gx_ref = np.zeros_like(x)
    for b, ch, r, q in np.ndindex(*idx_ref.shape):
        gx_ref[b, ch].flat[idx_ref[b, ch, r, q]] += gy[b, ch, r, q]
    np.testing.assert_allclose(B.max_pool2d_backward(gy, offsets, x.shape, *geometry), gx_ref, rtol=1e-12)


@pytest.mark.parametrize("return_indices", [False, True])
def test_max_pool_saves_only_byte_offsets_for_backward(return_indices):
    """What the graph keeps for max_pool2d's backward is one uint8 per output, with or without
    return_indices (the int64 indices are made only when asked for, and not saved)."""
    x = mt.randn(2, 3, 8, 8, requires_grad=True)
    out = F.max_pool2d(x, 2, return_indices=return_indices)
    y = out[0] if return_indices else out
    assert isinstance(out, tuple) == return_indices
    assert [(a.dtype, a.shape) for a in y.grad_fn._saved] == [(np.uint8, (2, 3, 4, 4))]


def test_max_pool_repeated_indices_accumulate():
    """One large value inside every 3x3 window (stride 1): its gradient is the sum over all windows."""
    x = np.zeros((1, 1, 5, 5))
    x[0, 0, 2, 2] = 10.0
    xt = t64(x, True)
    y, idx = F.max_pool2d(xt, 3, stride=1, return_indices=True)
    assert (idx.numpy() == 12).all()
    gy = np.arange(1.0, 10.0).reshape(1, 1, 3, 3)
    y.backward(t64(gy))
    expected = np.zeros_like(x)
    expected[0, 0, 2, 2] = gy.sum()
    np.testing.assert_array_equal(xt.grad.numpy(), expected)


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=1, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), ceil_mode=True),
    dict(kernel_size=2, stride=2, ceil_mode=True),
])
def test_max_pool_gradcheck(kwargs):
    x = t64(distinct((2, 2, 7, 5), 1), True)
    assert gradcheck(lambda x: F.max_pool2d(x, **kwargs), (x,))


def test_max_pool_unbatched_and_batch_of_one():
    x = distinct((3, 6, 5), 2)
    y, idx = F.max_pool2d(t64(x), 2, 1, return_indices=True)
    y_ref, idx_ref = max_pool_ref(x[None], (2, 2), (1, 1), (0, 0), (1, 1), False)
    assert y.shape == (3, 5, 4) and idx.shape == (3, 5, 4)
    np.testing.assert_array_equal(y.numpy(), y_ref[0])
    np.testing.assert_array_equal(idx.numpy(), idx_ref[0])


def test_pools_read_non_contiguous_inputs():
    x_nhwc = distinct((2, 6, 7, 3), 9)
    x = x_nhwc.transpose(0, 3, 1, 2)
    view = t64(x_nhwc).permute(0, 3, 1, 2)
    y, idx = F.max_pool2d(view, 3, 2, 1, return_indices=True)
    y_ref, idx_ref = max_pool_ref(x, (3, 3), (2, 2), (1, 1), (1, 1), False)
    np.testing.assert_array_equal(y.numpy(), y_ref)
    np.testing.assert_array_equal(idx.numpy(), idx_ref)
    np.testing.assert_allclose(F.avg_pool2d(view, 2, 1).numpy(),
                               avg_pool_ref(x, (2, 2), (1, 1), (0, 0), False, True, None), rtol=1e-12)


# ------------------------------------------------------------------------------ average pooling
@SETTINGS
@given(pool_cases(dilation=False), st.integers(0, 2**31 - 1), st.booleans(),
       st.sampled_from([None, 1, 3, -2]))
def test_avg_pool_matches_pytorch_divisors(case, seed, count_include_pad, divisor_override):
    shape, k, s, p, _, ceil_mode = case
    x = np.random.default_rng(seed).standard_normal(shape)
    y = F.avg_pool2d(t64(x), k, s, p, ceil_mode, count_include_pad, divisor_override)
    ref = avg_pool_ref(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_avg_pool_known_values():
    x = mt.arange(16.0).reshape(1, 1, 4, 4)
    assert F.avg_pool2d(x, 2).tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
    # corner window with padding 1: cells {0, 1, 4, 5} = 10, over 4 real cells or all 9
    assert F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)[0, 0, 0, 0].item() == 2.5
    assert F.avg_pool2d(x, 3, 1, 1)[0, 0, 0, 0].item() == pytest.approx(10 / 9)


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=1, divisor_override=4),
])
def test_avg_pool_gradcheck(kwargs):
    x = t64(np.random.default_rng(3).standard_normal((2, 2, 7, 6)), True)
    assert gradcheck(lambda x: F.avg_pool2d(x, **kwargs), (x,))


# ------------------------------------------------------------------------------ adaptive average
@SETTINGS
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**31 - 1))
def test_adaptive_avg_pool_matches_loops(h, w, oh, ow, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3, h, w))
    y = F.adaptive_avg_pool2d(t64(x), (oh, ow))
    np.testing.assert_allclose(y.numpy(), adaptive_ref(x, (oh, ow)), rtol=1e-12, atol=1e-12)


def test_adaptive_avg_pool_int_and_none_sizes():
    x = np.random.default_rng(4).standard_normal((1, 2, 7, 5))
    assert F.adaptive_avg_pool2d(t64(x), 3).shape == (1, 2, 3, 3)
    y = F.adaptive_avg_pool2d(t64(x), (None, 2))
    np.testing.assert_allclose(y.numpy(), adaptive_ref(x, (7, 2)), rtol=1e-12)
    np.testing.assert_allclose(F.adaptive_avg_pool2d(t64(x[0]), 1).numpy(),
                               x[0].mean(axis=(1, 2), keepdims=True))


@pytest.mark.parametrize("out", [(1, 1), (3, 2), (4, 5), (7, 6)])
def test_adaptive_avg_pool_gradcheck(out):
    x = t64(np.random.default_rng(5).standard_normal((2, 2, 5, 6)), True)
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, out), (x,))


# ------------------------------------------------------------------------------ dtypes
@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool2d(x, 3, 2, 1),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
])
def test_float32_stays_float32(pool):
    data = np.random.default_rng(6).standard_normal((2, 3, 9, 8)).astype(np.float32)
    x = mt.tensor(data, requires_grad=True)
    y = pool(x)
    assert y.array.dtype == np.float32
    y.sum().backward()
    assert x.grad.array.dtype == np.float32 and x.grad.shape == x.shape


# ------------------------------------------------------------------------------ errors
def test_pool_errors():
    x = mt.randn(1, 1, 6, 6)
    with pytest.raises(RuntimeError,
                       match=r"padding should be at most half of the kernel size, got padding=\(2, 2\)"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="padding should be at most half"):
        F.avg_pool2d(x, 2, padding=(0, 2))
    with pytest.raises(RuntimeError, match=r"3D \(unbatched\) or 4D \(batched\) input, got shape \(6, 6\)"):
        F.max_pool2d(mt.randn(6, 6), 2)
    with pytest.raises(RuntimeError, match=r"Given input size: \(1x6x6\). Calculated output size: \(1x0x0\). "
                                           "Output size is too small"):
        F.max_pool2d(x, 7)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(x, 3, dilation=3)
    with pytest.raises(RuntimeError, match="divisor_override must not be zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="output_size must be at least 0"):  # 0 is an empty output
        F.adaptive_avg_pool2d(x, (-1, 2))
    with pytest.raises(RuntimeError, match="floating point or integer input, got minitensor.bool"):
        F.max_pool2d(mt.zeros(1, 1, 4, 4, dtype=mt.bool), 2)
    with pytest.raises(RuntimeError, match="floating point input, got minitensor.int32"):
        F.avg_pool2d(mt.zeros(1, 1, 4, 4, dtype=mt.int32), 2)  # PyTorch averages int64 only
