"""Winograd F(2x2, 3x3) on the CPU (``backends/cpu/conv.py``, transforms in ``numba_kernels/conv.py``): forward,
input gradient and weight gradient against float64 direct convolutions, the float32 error bound, the
float64 path to float64 precision (and gradcheck), and which convolutions take it.

The bound: on inputs of unit scale with a 1/sqrt(fan-in) filter (a trained network's scale), the float32
error of each direction, max |err| / max |exact|, stays below 2e-6 (measured 1.5e-7 to 7e-7 on the CNN's
shapes, as im2col's own float32 error, 4e-7 to 7e-7): F(2x2)'s transforms hold only 0, +-1 and +-1/2.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.backends.cpu import conv as cpu_conv
from minitensor.backends.cpu import numba_kernels
from minitensor.backends.cpu.backend import NumpyBackend
from minitensor.testing import gradcheck

pytestmark = pytest.mark.skipif(numba_kernels.load("conv") is None, reason="Winograd needs the Numba kernels")
B = NumpyBackend()
ONES = (1, 1)
# (N, C_in, H, W, C_out, padding (top, bottom, left, right)): odd sizes (tiles past the edge), no padding,
# asymmetric and wider-than-kernel padding, and the CNN's conv2.
CASES = [(3, 16, 7, 6, 17, (1, 1, 1, 1)), (2, 16, 5, 9, 16, (0, 0, 0, 0)), (2, 18, 6, 6, 16, (2, 0, 1, 2)),
         (6, 16, 3, 4, 20, (3, 3, 2, 2)), (64, 32, 14, 14, 64, (1, 1, 1, 1))]


def direct(x: np.ndarray, w: np.ndarray, pad: tuple[int, int, int, int]) -> np.ndarray:
    """The 3x3 cross-correlation in float64, one einsum per kernel offset."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pad[:2], pad[2:]))
    oh, ow = x64.shape[2] - 2, x64.shape[3] - 2
    return sum(np.einsum("nchw,oc->nohw", x64[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
               for i in range(3) for j in range(3))


def exact_grads(gy: np.ndarray, x: np.ndarray, w: np.ndarray, pad: tuple[int, int, int, int]
                ) -> tuple[np.ndarray, np.ndarray]:
    """gx, gw of ``direct`` in float64: adjoints of the same sums."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pad[:2], pad[2:]))
    gxp, gw = np.zeros_like(x64), np.zeros(w.shape)
    oh, ow = gy.shape[2:]
    for i in range(3):
        for j in range(3):
            gxp[:, :, i:i + oh, j:j + ow] += np.einsum("nohw,oc->nchw", gy, w[:, :, i, j].astype(np.float64))
            gw[:, :, i, j] = np.einsum("nohw,nchw->oc", gy, x64[:, :, i:i + oh, j:j + ow])
    h, wd = x.shape[2:]
    return gxp[:, :, pad[0]:pad[0] + h, pad[2]:pad[2] + wd], gw


def relative(a: np.ndarray, exact: np.ndarray) -> float:
    return float(np.abs(a - exact).max() / np.abs(exact).max())


def _case(case, dtype, seed=0):
    n, c, h, wd, c_out, pad = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, wd)).astype(dtype)
    w = (rng.standard_normal((c_out, c, 3, 3)) / np.sqrt(9 * c)).astype(dtype)
    b = rng.standard_normal(c_out).astype(dtype)
    oh, ow = h + pad[0] + pad[1] - 2, wd + pad[2] + pad[3] - 2
    gy = rng.standard_normal((n, c_out, oh, ow)).astype(dtype)
    return x, w, b, gy, pad


@pytest.mark.parametrize("case", CASES)
def test_float32_within_the_bound_of_float64_direct_convolution(case):
    x, w, b, gy, pad = _case(case, np.float32)
    y = B.conv2d(x, w, b, ONES, pad, ONES, 1)
    gx, gw, gb = B.conv2d_backward(gy, x, w, ONES, pad, ONES, 1, (True, True, True))
    gx_exact, gw_exact = exact_grads(gy.astype(np.float64), x, w, pad)
    assert y.dtype == gx.dtype == gw.dtype == np.float32
    assert relative(y, direct(x, w, pad) + b[:, None, None]) < 2e-6
    assert relative(gx, gx_exact) < 2e-6
    assert relative(gw, gw_exact) < 2e-6
    assert relative(gb, gy.astype(np.float64).sum(axis=(0, 2, 3))) < 1e-5
    assert cpu_conv.is_channels_last(y) and cpu_conv.is_channels_last(gx)  # as the im2col path's


@pytest.mark.parametrize("case", CASES[:4])
def test_float64_to_float64_precision(case):
    x, w, b, gy, pad = _case(case, np.float64, seed=1)
    y = B.conv2d(x, w, b, ONES, pad, ONES, 1)
    gx, gw, _ = B.conv2d_backward(gy, x, w, ONES, pad, ONES, 1, (True, True, False))
    gx_exact, gw_exact = exact_grads(gy, x, w, pad)
    assert relative(y, direct(x, w, pad) + b[:, None, None]) < 1e-14
    assert relative(gx, gx_exact) < 1e-14 and relative(gw, gw_exact) < 1e-14


def test_gradcheck_through_winograd():
    x = mt.randn(1, 16, 3, 5, dtype=mt.float64, requires_grad=True)
    w = mt.randn(16, 16, 3, 3, dtype=mt.float64, requires_grad=True)
    b = mt.randn(16, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda *a: mt.nn.functional.conv2d(*a, padding=1), (x, w, b))


def _kernels_launched(x: mt.Tensor, w: mt.Tensor, **kwargs) -> set[str]:
    with mt.profiler.profile() as prof:
        mt.nn.functional.conv2d(x.requires_grad_(), w.requires_grad_(), **kwargs).sum().backward()
    return {e.key for e in prof.key_averages()}


def test_which_convolutions_take_winograd():
    """3x3, stride 1, no dilation, one group, 16+ channels each side, enough output tiles for the channels;
    everything else takes im2col."""
    winograd = {"winograd_input", "winograd_output", "winograd_output_adjoint"}
    assert winograd <= _kernels_launched(mt.randn(2, 16, 6, 6), mt.randn(16, 16, 3, 3), padding=1)
    for x, w, kwargs in [(mt.randn(2, 8, 6, 6), mt.randn(16, 8, 3, 3), {}),  # too few input channels
                         (mt.randn(2, 16, 6, 6), mt.randn(16, 16, 3, 3), {"stride": 2}),
                         (mt.randn(2, 16, 6, 6), mt.randn(16, 16, 3, 3), {"dilation": 2}),
                         (mt.randn(2, 16, 6, 6), mt.randn(16, 8, 3, 3), {"groups": 2}),
                         (mt.randn(2, 16, 6, 6), mt.randn(16, 16, 5, 5), {}),
                         # too few 2x2 output tiles for the channels: 32 * tiles < C_out * C_in
                         (mt.randn(4, 64, 2, 2), mt.randn(64, 64, 3, 3), {"padding": 1}),
                         (mt.randn(1, 32, 3, 4), mt.randn(40, 32, 3, 3), {"padding": 1})]:
        assert not winograd & _kernels_launched(x, w, **kwargs)
    # the same channels with enough tiles: 32 * 10 * 2 * 2 = 1280 >= 40 * 32
    assert winograd <= _kernels_launched(mt.randn(10, 32, 3, 4), mt.randn(40, 32, 3, 3), padding=1)


def test_nchw_and_channels_last_inputs_agree():
    x, w, b, gy, pad = _case(CASES[0], np.float32)
    x_cl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    gy_cl = np.ascontiguousarray(gy.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(B.conv2d(x, w, b, ONES, pad, ONES, 1), B.conv2d(x_cl, w, b, ONES, pad, ONES, 1))
    for a, c in zip(B.conv2d_backward(gy, x, w, ONES, pad, ONES, 1, (True, True, True)),
                    B.conv2d_backward(gy_cl, x_cl, w, ONES, pad, ONES, 1, (True, True, True))):
        np.testing.assert_array_equal(a, c)
