"""conv2d and conv_transpose2d: forward against naive float64 loops, gradients by finite differences,
the adjoint identity between the two, dtypes, unbatched inputs and error messages."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.backends import get_backend
from minitensor.backends.cpu import conv as cpu_conv
from minitensor.backends.cpu import parallel as cpu_parallel
from minitensor.backends.cpu import numba_kernels
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=30, deadline=None)
ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------ naive references
def conv2d_ref(x, w, b=None, stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """Direct 7-loop cross-correlation in float64; pad = (top, bottom, left, right)."""
    n, c, h, wd = x.shape
    c_out, cg, kh, kw = w.shape
    top, bottom, left, right = pad
    xp = np.zeros((n, c, h + top + bottom, wd + left + right))
    xp[:, :, top:top + h, left:left + wd] = x
    oh = (h + top + bottom - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + left + right - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    og = c_out // groups
    y = np.zeros((n, c_out, oh, ow))
    for b_ in range(n):
        for o in range(c_out):
            g = o // og
            for r in range(oh):
                for q in range(ow):
                    acc = 0.0
                    for ci in range(cg):
                        for i in range(kh):
                            for j in range(kw):
                                acc += w[o, ci, i, j] * xp[b_, g * cg + ci, r * stride[0] + i * dilation[0],
                                                           q * stride[1] + j * dilation[1]]
                    y[b_, o, r, q] = acc + (0.0 if b is None else b[o])
    return y


def conv_transpose2d_ref(x, w, b=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0), groups=1,
                         dilation=(1, 1)):
    """Scatter form: every input pixel adds x * w[c_in, c_out_in_group] at (h*s - p + i*d, w*s - p + j*d)."""
    n, c_in, h, wd = x.shape
    _, cog, kh, kw = w.shape
    cig = c_in // groups
    oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    ow = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    y = np.zeros((n, cog * groups, oh, ow))
    for b_ in range(n):
        for ci in range(c_in):
            g = ci // cig
            for r in range(h):
                for q in range(wd):
                    for co in range(cog):
                        for i in range(kh):
                            for j in range(kw):
                                rr = r * stride[0] - padding[0] + i * dilation[0]
                                qq = q * stride[1] - padding[1] + j * dilation[1]
                                if 0 <= rr < oh and 0 <= qq < ow:
                                    y[b_, g * cog + co, rr, qq] += x[b_, ci, r, q] * w[ci, co, i, j]
    if b is not None:
        y += b[None, :, None, None]
    return y


def t64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ------------------------------------------------------------------------------ conv2d forward
def _pair(draw, most: int) -> tuple[int, int]:
    """(h, w) values drawn in [1, most] (kernel sizes, strides, dilations)."""
    return draw(st.integers(1, most)), draw(st.integers(1, most))


@st.composite
def conv_cases(draw):
    groups = draw(st.integers(1, 3))
    kernel, stride, dilation = _pair(draw, 3), _pair(draw, 3), _pair(draw, 2)
    pad = tuple(draw(st.integers(0, 2)) for _ in range(4))
    h = draw(st.integers(1, 7)) + dilation[0] * (kernel[0] - 1)
    w = draw(st.integers(1, 7)) + dilation[1] * (kernel[1] - 1)
    shape = (draw(st.integers(1, 2)), groups * draw(st.integers(1, 2)), h, w)
    w_shape = (groups * draw(st.integers(1, 2)), shape[1] // groups) + kernel
    return shape, w_shape, stride, pad, dilation, groups, draw(st.booleans())


@SETTINGS
@given(conv_cases(), st.integers(0, 2**31 - 1))
def test_conv2d_backend_matches_loops(case, seed):
    shape, w_shape, stride, pad, dilation, groups, with_bias = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[0]) if with_bias else None
    y = get_backend("cpu").conv2d(x, w, b, stride, pad, dilation, groups)
    np.testing.assert_allclose(y, conv2d_ref(x, w, b, stride, pad, dilation, groups), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(conv_cases(), st.integers(0, 2**31 - 1))
def test_conv2d_backward_is_the_transpose_of_forward(case, seed):
    """<gx, dx> = <gy, conv(dx, w)> and <gw, dw> = <gy, conv(x, dw)> (conv is linear in each argument),
    with the right side from the loop reference, on every configuration the forward test draws."""
    shape, w_shape, stride, pad, dilation, groups, _ = case
    rng = np.random.default_rng(seed)
    B = get_backend("cpu")
    x, w = rng.standard_normal(shape), rng.standard_normal(w_shape)
    dx, dw = rng.standard_normal(shape), rng.standard_normal(w_shape)
    y = conv2d_ref(x, w, None, stride, pad, dilation, groups)
    gy = rng.standard_normal(y.shape)
    gx, gw, gb = B.conv2d_backward(gy, x, w, stride, pad, dilation, groups, (True, True, True))
    along_dx = np.sum(gy * conv2d_ref(dx, w, None, stride, pad, dilation, groups))
    along_dw = np.sum(gy * conv2d_ref(x, dw, None, stride, pad, dilation, groups))
    np.testing.assert_allclose(np.sum(gx * dx), along_dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.sum(gw * dw), along_dw, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gb, gy.sum(axis=(0, 2, 3)), rtol=1e-12, atol=1e-12)
    assert gx.shape == x.shape and gw.shape == w.shape and gb.shape == (w_shape[0],)
    # without the input gradient the weight gradient takes its other path (gy in its own layout)
    _, gw_alone, _ = B.conv2d_backward(gy, x, w, stride, pad, dilation, groups, (False, True, False))
    np.testing.assert_allclose(gw_alone, gw, rtol=1e-10, atol=1e-10)


def im2col_ref(x, kernel, stride, pad, dilation, out_hw, groups):
    """cols[g, (c, i, j), n, (oh, ow)] = x_pad[n, g*Cg + c, oh*s + i*d, ow*s + j*d], by loops."""
    n, c, h, wd = x.shape
    top, bottom, left, right = pad
    xp = np.zeros((n, c, h + top + bottom, wd + left + right))
    xp[:, :, top:top + h, left:left + wd] = x
    cg = c // groups
    cols = np.zeros((groups, cg * kernel[0] * kernel[1], n, out_hw[0] * out_hw[1]))
    for g, ci, i, j, b_, r, q in np.ndindex(groups, cg, *kernel, n, *out_hw):
        cols[g, (ci * kernel[0] + i) * kernel[1] + j, b_, r * out_hw[1] + q] = \
            xp[b_, g * cg + ci, r * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]]
    return cols


def hook_backends():
    """The backends whose index hooks are checked: cpu, and cuda where a GPU is present."""
    return [get_backend("cpu")] + ([get_backend("cuda")] if mt.cuda.is_available() else [])


@SETTINGS
@given(conv_cases(), st.integers(0, 2**31 - 1))
def test_conv_index_hooks_match_loops(case, seed):
    """The two hooks a device overrides with its kernels (ConvOps.im2col and ConvOps.col2im), on every
    backend: im2col against the loops, and col2im as conv2d's input gradient, <gx, dx> = <gy, conv(dx, w)>."""
    shape, w_shape, stride, pad, dilation, groups, _ = case
    rng = np.random.default_rng(seed)
    x, w, dx = rng.standard_normal(shape), rng.standard_normal(w_shape), rng.standard_normal(shape)
    y = conv2d_ref(x, w, None, stride, pad, dilation, groups)
    gy = rng.standard_normal(y.shape)
    gy2 = np.ascontiguousarray(gy.transpose(0, 2, 3, 1)).reshape(-1, gy.shape[1])
    along_dx = np.sum(gy * conv2d_ref(dx, w, None, stride, pad, dilation, groups))
    for B in hook_backends():
        cols = B.im2col(B.asarray(x), w_shape[2:], stride, pad, dilation, y.shape[2:], groups)
        np.testing.assert_allclose(B.to_numpy(cols), im2col_ref(x, w_shape[2:], stride, pad, dilation,
                                                                 y.shape[2:], groups), rtol=0, atol=0)
        gx = B.to_numpy(B.col2im(B.asarray(gy2), y.shape[2:], B.asarray(w), shape, stride, pad, dilation, groups))
        assert gx.shape == shape
        np.testing.assert_allclose(np.sum(gx * dx), along_dx, rtol=1e-10, atol=1e-10)


def test_conv2d_backward_skips_what_is_not_needed():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    gy = rng.standard_normal((1, 3, 3, 3))
    out = get_backend("cpu").conv2d_backward(gy, x, w, (1, 1), (0, 0, 0, 0), (1, 1), 1, (False, True, False))
    assert out[0] is None and out[2] is None and out[1].shape == w.shape


def test_conv2d_known_values():
    """A 3x3 box filter of ones over 1..16 with zero padding 1: each output is its 3x3 neighbourhood sum."""
    x = mt.arange(1.0, 17.0).reshape(1, 1, 4, 4)
    y = F.conv2d(x, mt.ones(1, 1, 3, 3), padding=1)
    grid = np.arange(1.0, 17.0).reshape(4, 4)
    assert y.shape == (1, 1, 4, 4)
    assert y[0, 0, 0, 0].item() == grid[:2, :2].sum() == 14.0
    assert y[0, 0, 1, 1].item() == grid[:3, :3].sum() == 54.0
    assert y[0, 0, 3, 3].item() == grid[2:, 2:].sum()


@pytest.mark.parametrize("kernel,dilation", [((2, 2), (1, 1)), ((4, 3), (1, 1)), ((2, 3), (2, 3)),
                                             ((3, 3), (1, 1))])
def test_conv2d_same_padding_puts_the_extra_at_the_end(kernel, dilation):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3) + kernel)
    y = F.conv2d(t64(x), t64(w), padding="same", dilation=dilation)
    totals = [dilation[a] * (kernel[a] - 1) for a in range(2)]
    pad = (totals[0] // 2, totals[0] - totals[0] // 2, totals[1] // 2, totals[1] - totals[1] // 2)
    assert y.shape == (2, 4, 7, 6)
    np.testing.assert_allclose(y.numpy(), conv2d_ref(x, w, None, (1, 1), pad, dilation),
                               rtol=1e-12, atol=1e-12)


def test_conv2d_valid_padding_and_unbatched_input():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 6, 5)), rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(2)
    y = F.conv2d(t64(x), t64(w), t64(b), padding="valid", stride=(2, 1))
    assert y.shape == (2, 3, 4)
    np.testing.assert_allclose(y.numpy(), conv2d_ref(x[None], w, b, (2, 1))[0], rtol=1e-12, atol=1e-12)


def test_conv2d_reads_non_contiguous_inputs():
    """A channels-last view and a strided slice: im2col's strided view follows the real strides."""
    rng = np.random.default_rng(8)
    x_nhwc = rng.standard_normal((2, 7, 6, 3))
    w = rng.standard_normal((4, 3, 3, 3))
    x_view = t64(x_nhwc).permute(0, 3, 1, 2)
    assert not x_view.is_contiguous()
    ref = conv2d_ref(x_nhwc.transpose(0, 3, 1, 2), w, None, (1, 1), (1, 1, 1, 1))
    np.testing.assert_allclose(F.conv2d(x_view, t64(w), padding=1).numpy(), ref, rtol=1e-12, atol=1e-12)
    wide = rng.standard_normal((2, 3, 7, 12))
    ref = conv2d_ref(wide[..., ::2], w, None, (2, 1), (0, 0, 0, 0))
    np.testing.assert_allclose(F.conv2d(t64(wide)[..., ::2], t64(w), stride=(2, 1)).numpy(), ref,
                               rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------ the CPU backend's paths
def in_layout(a, layout):
    """The same (N, C, H, W) values as a C-contiguous array, a channels-last view, or a strided slice."""
    if layout == "channels_last":
        return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if layout == "strided":
        wide = np.zeros(a.shape[:3] + (2 * a.shape[3],), dtype=a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    return np.ascontiguousarray(a)


@contextmanager
def cpu_paths(numba: bool, chunk_bytes: int | None):
    """The CPU backend with the Numba kernels on or off and im2col chunks of at most ``chunk_bytes``."""
    with ExitStack() as stack:
        if not numba:
            stack.enter_context(mock.patch.object(numba_kernels, "load", lambda *_: None))
        if chunk_bytes is not None:
            stack.enter_context(mock.patch.object(cpu_parallel, "CHUNK_BYTES", chunk_bytes))
        yield get_backend("cpu")


@SETTINGS
@given(conv_cases(), st.integers(0, 2**31 - 1), st.sampled_from(["nchw", "channels_last", "strided"]),
       st.sampled_from(["nchw", "channels_last"]), st.booleans(), st.sampled_from([None, 1]))
def test_conv2d_layouts_chunks_and_kernels_match_loops(case, seed, x_layout, gy_layout, numba, chunk_bytes):
    """Every input layout (K-major columns for a C-contiguous x, channels-last rows otherwise), one image
    per chunk or one chunk, col2im by Numba or NumPy: forward against the loops, backward by the adjoint
    identity, and the groups == 1 results channels-last in memory."""
    shape, w_shape, stride, pad, dilation, groups, with_bias = case
    rng = np.random.default_rng(seed)
    x, w, dx, dw = (rng.standard_normal(s) for s in (shape, w_shape, shape, w_shape))
    b = rng.standard_normal(w_shape[0]) if with_bias else None
    y_ref = conv2d_ref(x, w, b, stride, pad, dilation, groups)
    gy = rng.standard_normal(y_ref.shape)
    with cpu_paths(numba, chunk_bytes) as B:
        y = B.conv2d(in_layout(x, x_layout), w, b, stride, pad, dilation, groups)
        gx, gw, gb = B.conv2d_backward(in_layout(gy, gy_layout), in_layout(x, x_layout), w, stride, pad,
                                       dilation, groups, (True, True, True))
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=1e-12)
    along_dx = np.sum(gy * conv2d_ref(dx, w, None, stride, pad, dilation, groups))
    along_dw = np.sum(gy * conv2d_ref(x, dw, None, stride, pad, dilation, groups))
    np.testing.assert_allclose(np.sum(gx * dx), along_dx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.sum(gw * dw), along_dw, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gb, gy.sum(axis=(0, 2, 3)), rtol=1e-12, atol=1e-12)
    assert gx.shape == x.shape and gw.shape == w.shape and gw.flags.c_contiguous
    if groups == 1:
        assert cpu_conv.is_channels_last(y) and cpu_conv.is_channels_last(gx)


def test_conv2d_known_values_in_float32_with_every_path():
    """The 3x3 box filter over 1..16 (sums of 3x3 neighbourhoods) in float32: chunks of one image,
    channels-last input, both col2im bodies; its input gradient for gy = 1 counts the windows that read
    each pixel (4 in a corner, 6 on an edge, 9 inside)."""
    x = np.tile(np.arange(1.0, 17.0, dtype=np.float32).reshape(1, 1, 4, 4), (2, 3, 1, 1))
    w = np.ones((1, 3, 3, 3), dtype=np.float32)
    grid = np.pad(np.arange(1.0, 17.0).reshape(4, 4), 1)
    sums = 3 * np.array([[grid[r:r + 3, q:q + 3].sum() for q in range(4)] for r in range(4)])
    counts = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]])
    for numba in (True, False):
        with cpu_paths(numba, 1) as B:
            y = B.conv2d(in_layout(x, "channels_last"), w, None, (1, 1), (1, 1, 1, 1), (1, 1), 1)
            gx, gw, _ = B.conv2d_backward(np.ones_like(y), x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1,
                                          (True, True, False))
        assert y.dtype == gx.dtype == gw.dtype == np.float32
        np.testing.assert_array_equal(y[0, 0], sums)
        np.testing.assert_array_equal(gx[1, 2], counts)


def test_cnn_blocks_gradcheck_through_channels_last_intermediates():
    """conv -> relu -> max-pool -> conv -> flatten, in float64: the first conv's output is channels-last,
    pooling keeps it so and the second conv reads it as rows; gradients by finite differences."""
    rng = np.random.default_rng(9)
    x = t64(rng.standard_normal((2, 1, 6, 6)), True)
    w1, w2 = t64(rng.standard_normal((3, 1, 3, 3)), True), t64(rng.standard_normal((4, 3, 2, 2)), True)
    b1 = t64(rng.standard_normal(3), True)

    def net(x, w1, b1, w2):
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
        assert cpu_conv.is_channels_last(h.array)
        return F.conv2d(h, w2, padding=1).flatten(1)

    assert gradcheck(net, (x, w1, b1, w2))


def test_without_numba_conv_and_pooling_run_on_numpy():
    """MINITENSOR_NUMBA=0: a conv + max-pool step works and never imports numba."""
    code = """
import sys
import minitensor as mt
import minitensor.nn.functional as F
x = mt.randn(2, 3, 8, 8, requires_grad=True)
F.max_pool2d(F.conv2d(x, mt.randn(4, 3, 3, 3), padding=1), 2).sum().backward()
assert x.grad.shape == (2, 3, 8, 8)
from minitensor.backends.cpu import numba_kernels
assert numba_kernels.load("conv") is None and "numba" not in sys.modules, sorted(sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "MINITENSOR_NUMBA": "0",
                               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert done.returncode == 0, done.stderr[-3000:]


# ------------------------------------------------------------------------------ conv2d gradients
GRAD_CASES = [
    # (x shape, w shape, kwargs)
    ((2, 3, 5, 4), (4, 3, 3, 3), dict(padding=1)),
    ((1, 2, 7, 5), (3, 2, 3, 2), dict(stride=(2, 3), padding=(2, 0))),
    ((2, 2, 6, 6), (2, 2, 2, 2), dict(padding="same")),
    ((1, 3, 5, 6), (2, 3, 4, 3), dict(padding="same", dilation=(1, 2))),
    ((2, 4, 7, 7), (6, 2, 3, 3), dict(stride=2, dilation=2, groups=2, padding=1)),
    ((1, 6, 5, 5), (6, 1, 3, 3), dict(groups=6, padding=1)),
    ((1, 1, 3, 3), (1, 1, 3, 3), dict()),
]


@pytest.mark.parametrize("x_shape,w_shape,kwargs", GRAD_CASES)
def test_conv2d_gradcheck(x_shape, w_shape, kwargs):
    rng = np.random.default_rng(3)
    x = t64(rng.standard_normal(x_shape), True)
    w = t64(rng.standard_normal(w_shape), True)
    b = t64(rng.standard_normal(w_shape[0]), True)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kwargs), (x, w, b))


def test_conv2d_gradcheck_unbatched_without_bias():
    rng = np.random.default_rng(4)
    x = t64(rng.standard_normal((2, 5, 4)), True)
    w = t64(rng.standard_normal((3, 2, 2, 3)), True)
    assert gradcheck(lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(1, 1)), (x, w))


# ------------------------------------------------------------------------------ conv_transpose2d
@st.composite
def transpose_cases(draw):
    groups = draw(st.integers(1, 2))
    kernel, stride, dilation = _pair(draw, 3), _pair(draw, 3), _pair(draw, 2)
    padding = (draw(st.integers(0, 1)), draw(st.integers(0, 1)))
    output_padding = tuple(draw(st.integers(0, max(stride[a], dilation[a]) - 1)) for a in range(2))
    shape = (draw(st.integers(1, 2)), groups * draw(st.integers(1, 2)), draw(st.integers(2, 5)),
             draw(st.integers(2, 5)))
    w_shape = (shape[1], draw(st.integers(1, 2))) + kernel
    out = [(shape[2 + a] - 1) * stride[a] - 2 * padding[a] + dilation[a] * (kernel[a] - 1)
           + output_padding[a] + 1 for a in range(2)]
    assume(min(out) >= 1)
    return shape, w_shape, stride, padding, output_padding, groups, dilation


@SETTINGS
@given(transpose_cases(), st.integers(0, 2**31 - 1))
def test_conv_transpose2d_matches_loops(case, seed):
    shape, w_shape, stride, padding, output_padding, groups, dilation = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(shape), rng.standard_normal(w_shape)
    b = rng.standard_normal(w_shape[1] * groups)
    ref = conv_transpose2d_ref(x, w, b, stride, padding, output_padding, groups, dilation)
    y = F.conv_transpose2d(t64(x), t64(w), t64(b), stride, padding, output_padding, groups, dilation)
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(transpose_cases(), st.integers(0, 2**31 - 1))
def test_conv_transpose2d_is_the_adjoint_of_conv2d(case, seed):
    """<conv2d(y, w), x> == <y, conv_transpose2d(x, w)> for y of the transposed conv's output shape."""
    shape, w_shape, stride, padding, output_padding, groups, dilation = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(shape), rng.standard_normal(w_shape)
    yt = F.conv_transpose2d(t64(x), t64(w), None, stride, padding, output_padding, groups, dilation).numpy()
    probe = rng.standard_normal(yt.shape)
    back = conv2d_ref(probe, w, None, stride, (padding[0],) * 2 + (padding[1],) * 2, dilation, groups)
    back = back[:, :, :shape[2], :shape[3]]  # output_padding >= stride (dilated case) gives an extra row
    np.testing.assert_allclose(np.sum(back * x), np.sum(probe * yt), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("w_shape,kwargs", [
    ((3, 2, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((3, 2, 2, 3), dict(stride=(1, 2), dilation=(2, 1))),
    ((4, 1, 3, 2), dict(groups=2, stride=2, padding=(1, 0))),
    ((3, 2, 3, 3), dict(stride=1, dilation=3, output_padding=2)),
])
def test_conv_transpose2d_gradcheck(w_shape, kwargs):
    rng = np.random.default_rng(5)
    x = t64(rng.standard_normal((2, w_shape[0], 4, 3)), True)
    w = t64(rng.standard_normal(w_shape), True)
    b = t64(rng.standard_normal(w_shape[1] * kwargs.get("groups", 1)), True)
    assert gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, **kwargs), (x, w, b))


def test_conv_transpose2d_unbatched():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 2, 2))
    y = F.conv_transpose2d(t64(x), t64(w), stride=2)
    assert y.shape == (3, 6, 6)
    np.testing.assert_allclose(y.numpy(), conv_transpose2d_ref(x[None], w, stride=(2, 2))[0], rtol=1e-12)


# ------------------------------------------------------------------------------ dtypes
@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
def test_float32_stays_float32(op):
    rng = np.random.default_rng(7)
    x = mt.tensor(rng.standard_normal((2, 4, 6, 6)).astype(np.float32), requires_grad=True)
    w = mt.tensor(rng.standard_normal((4, 4, 3, 3)).astype(np.float32), requires_grad=True)
    b = mt.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    y = getattr(F, op)(x, w, b, stride=2, padding=1)
    assert y.dtype == mt.float32 and y.array.dtype == np.float32
    y.sum().backward()
    for t in (x, w, b):
        assert t.grad.dtype == mt.float32 and t.grad.shape == t.shape
    ref_fn = conv2d_ref if op == "conv2d" else conv_transpose2d_ref
    x64, w64, b64 = (t.detach().numpy().astype(np.float64) for t in (x, w, b))
    ref = ref_fn(x64, w64, b64, (2, 2), (1, 1, 1, 1) if op == "conv2d" else (1, 1))
    np.testing.assert_allclose(y.detach().numpy(), ref, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------------------ errors
def test_error_names_both_channel_counts():
    with pytest.raises(RuntimeError,
                       match=r"expected input with 3 channels \(weight \(8, 3, 3, 3\), groups=1\), got 1"):
        F.conv2d(mt.randn(2, 1, 8, 8), mt.randn(8, 3, 3, 3))
    with pytest.raises(RuntimeError, match="expected input with 4 channels"):
        F.conv2d(mt.randn(1, 2, 8, 8), mt.randn(6, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="expected input with 3 channels"):
        F.conv_transpose2d(mt.randn(1, 2, 4, 4), mt.randn(3, 5, 3, 3))


def test_errors_for_groups():
    with pytest.raises(RuntimeError, match="out_channels 5 .* not divisible by groups=2"):
        F.conv2d(mt.randn(1, 4, 8, 8), mt.randn(5, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="input channels 5 are not divisible by groups=2"):
        F.conv2d(mt.randn(1, 5, 8, 8), mt.randn(4, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="groups must be a positive int"):
        F.conv2d(mt.randn(1, 4, 8, 8), mt.randn(4, 4, 3, 3), groups=0)


def test_error_kernel_larger_than_padded_input():
    with pytest.raises(RuntimeError, match=r"kernel \(5, 5\).*larger than the padded input \(4, 6\)"):
        F.conv2d(mt.randn(1, 1, 2, 4), mt.randn(1, 1, 5, 5), padding=1)
    with pytest.raises(RuntimeError, match=r"spanning \(5, 1\) with dilation \(2, 1\)"):
        F.conv2d(mt.randn(1, 1, 4, 4), mt.randn(1, 1, 3, 1), dilation=(2, 1))


def test_error_input_dims_dtype_and_bias():
    with pytest.raises(RuntimeError, match=r"3D \(unbatched\) or 4D \(batched\) input, got shape \(8, 8\)"):
        F.conv2d(mt.randn(8, 8), mt.randn(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="weight must be 4D"):
        F.conv2d(mt.randn(1, 1, 8, 8), mt.randn(1, 3, 3))
    with pytest.raises(RuntimeError,
                       match="expected scalar type Double but found Float"):
        F.conv2d(mt.randn(1, 1, 8, 8, dtype=mt.float64), mt.randn(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match=r"bias must have shape \(2,\)"):
        F.conv2d(mt.randn(1, 1, 8, 8), mt.randn(2, 1, 3, 3), mt.randn(3))
    with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\) should be the same"):
        F.conv2d(mt.randn(1, 1, 8, 8), mt.randn(2, 1, 3, 3), mt.randn(2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="expected a floating point input"):
        F.conv2d(mt.zeros(1, 1, 8, 8, dtype=mt.int64), mt.zeros(2, 1, 3, 3, dtype=mt.int64))


def test_error_padding_arguments():
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(mt.randn(1, 1, 8, 8), mt.randn(1, 1, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="padding must be an int, a pair, 'valid' or 'same'"):
        F.conv2d(mt.randn(1, 1, 8, 8), mt.randn(1, 1, 3, 3), padding="full")
    with pytest.raises(RuntimeError, match="stride must be at least 1"):
        F.conv2d(mt.randn(1, 1, 8, 8), mt.randn(1, 1, 3, 3), stride=0)
    with pytest.raises(RuntimeError, match="output_padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(mt.randn(1, 1, 4, 4), mt.randn(1, 1, 3, 3), stride=2, output_padding=2)
