"""The CPU's im2col convolution (``backends/cpu/conv.py``) against float64 direct sums: both column layouts
(K-major from an NCHW input, channels-last rows), with the bias folded into the GEMM as a column of ones and
gb read off the weight gradient's GEMM, in every combination of wanted gradients; with and without Numba."""
from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from minitensor.backends.cpu import conv as cpu_conv
from minitensor.backends.cpu import numba_kernels
from minitensor.backends.cpu.backend import NumpyBackend

B = NumpyBackend()
PATHS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(numba_kernels.load("conv") is None,
                                                                 reason="numba not installed"))]
# (N, C_in, H, W, C_out, kernel, stride, padding (top, bottom, left, right), dilation): the CNN's conv1 (one
# input channel, K-major columns), a strided 5x3 kernel, dilation, asymmetric padding
CASES = [(4, 1, 28, 28, 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
         (3, 3, 9, 8, 5, (5, 3), (2, 1), (2, 1, 0, 2), (1, 1)),
         (2, 4, 10, 11, 6, (3, 3), (1, 2), (0, 0, 1, 1), (2, 1))]


def direct(x, w, b, stride, pad, dilation):
    """y (N, C_out, oH, oW) in float64: one einsum per kernel offset over the zero-padded input."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pad[:2], pad[2:]))
    k_h, k_w = w.shape[2:]
    oh = (x64.shape[2] - dilation[0] * (k_h - 1) - 1) // stride[0] + 1
    ow = (x64.shape[3] - dilation[1] * (k_w - 1) - 1) // stride[1] + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow)) + (0 if b is None else b.astype(np.float64)[:, None, None])
    for i in range(k_h):
        for j in range(k_w):
            tap = x64[:, :, i * dilation[0]:, j * dilation[1]:]
            tap = tap[:, :, :oh * stride[0]:stride[0], :ow * stride[1]:stride[1]]
            y += np.einsum("nchw,oc->nohw", tap, w[:, :, i, j].astype(np.float64))
    return y


def exact_grads(gy, x, w, stride, pad, dilation):
    """gx, gw, gb of ``direct`` in float64: each kernel offset's adjoint."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pad[:2], pad[2:]))
    gxp, gw = np.zeros_like(x64), np.zeros(w.shape)
    oh, ow = gy.shape[2:]
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            rows = slice(i * dilation[0], i * dilation[0] + (oh - 1) * stride[0] + 1, stride[0])
            cols = slice(j * dilation[1], j * dilation[1] + (ow - 1) * stride[1] + 1, stride[1])
            gxp[:, :, rows, cols] += np.einsum("nohw,oc->nchw", gy, w[:, :, i, j].astype(np.float64))
            gw[:, :, i, j] = np.einsum("nohw,nchw->oc", gy, x64[:, :, rows, cols])
    h, wd = x.shape[2:]
    return gxp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd], gw, gy.sum(axis=(0, 2, 3))


def relative(a, exact):
    return float(np.abs(a - exact).max() / np.abs(exact).max())


def _path(name):
    return mock.patch.object(numba_kernels, "load", numba_kernels.load if name == "numba" else lambda *_: None)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("with_bias", [True, False])
def test_im2col_forward_and_backward_match_float64(case, layout, path, with_bias):
    n, c, h, wd, c_out, kernel, stride, pad, dilation = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, wd)).astype(np.float32)
    if layout == "channels_last":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    w = (rng.standard_normal((c_out, c, *kernel)) / np.sqrt(c * kernel[0] * kernel[1])).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32) if with_bias else None
    with _path(path):
        y = B.conv2d(x, w, b, stride, pad, dilation, 1)
        assert y.dtype == np.float32 and cpu_conv.is_channels_last(y)
        assert relative(y, direct(x, w, b, stride, pad, dilation)) < 2e-6
        gy = rng.standard_normal(y.shape).astype(np.float32)
        exact = exact_grads(gy.astype(np.float64), x, w, stride, pad, dilation)
        for needs in [(True, True, True), (False, True, True), (False, True, False), (False, False, True),
                      (True, False, True)]:
            grads = B.conv2d_backward(gy, x, w, stride, pad, dilation, 1, needs)
            for wanted, g, e in zip(needs, grads, exact):
                assert (g is not None) == wanted
                if wanted:
                    assert g.shape == e.shape and g.dtype == np.float32
                    assert relative(g, e) < 1e-5


def test_ones_column_carries_the_bias_and_gb():
    """With ``ones``, each chunk's columns end in a column of ones (rows layout) or a row of ones (K-major)."""
    for x in [np.ones((3, 1, 5, 5), np.float32), np.ones((3, 5, 5, 2), np.float32).transpose(0, 3, 1, 2)]:
        im2col = cpu_conv.Im2col(x, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (5, 5), ones=True)
        for _, cols in im2col.chunks():
            assert cols.shape[1] == im2col.k + 1
            np.testing.assert_array_equal(cols[:, -1], 1)
