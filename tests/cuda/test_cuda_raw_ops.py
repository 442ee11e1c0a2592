"""The RawKernel overrides (``backends/cuda/<family>.py``): every override against the NumPy backend on the
same host data, in float32 and float64 (float64 to ~1e-12) and in float16 and bfloat16 (the NumPy backend
computing in float32 from the same 16-bit inputs, its results rounded to their dtype: what the kernels' float
accumulation promises), and every kernel instance compiled and loaded, on two targets:

- ``cuda`` (marked ``gpu``): the real CudaBackend on a GPU, skipped without one;
- ``emulated``: the same ``.cu`` text compiled with g++ against ``tests/cuda_emulation`` (CPU threads for a
  block's threads, real barriers and atomics) and launched through ``rawmodule`` and the family mixins
  unchanged, with a fake CuPy in ``sys.modules``, at three launch geometries (block sizes that do and do
  not divide the work, and grids too small for it, so that the grid-stride loops wrap). Skipped without g++.

Each case also checks, through the ``launched`` spy, which kernels ran: a comparison that silently went
through the generic ``super()`` path would prove nothing about the kernel.
"""
from __future__ import annotations

from typing import Any

import cuda_emulation
import numpy as np
import pytest
from ml_dtypes import bfloat16

import minitensor as mt
from minitensor.backends import get_backend
from minitensor.backends.cuda import rawmodule
from minitensor.backends.cpu.backend import NumpyBackend

CPU = NumpyBackend()
FLOAT_DTYPES = [np.float32, np.float64]
LOW = [np.float16, bfloat16]  # the 16-bit floats of mixed precision, which kernels accumulate in float32
DTYPES = [*LOW, *FLOAT_DTYPES]  # the families with 16-bit instances: all but embedding
# float32: a few ulps of each output's scale (sums of up to ~100 terms, other libm/BLAS); float64: ~1e-12;
# float16 and bfloat16: two of their ulps (2 ** -10 and 2 ** -7 relative), one for rounding and one for a
# float32 result on the other side of a rounding boundary
TOL = {np.float16: dict(rtol=2e-3, atol=2e-3), bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
       np.float32: dict(rtol=3e-5, atol=3e-6), np.float64: dict(rtol=1e-11, atol=1e-12)}
rng = np.random.default_rng(5)


# emulated launch geometries: (threads per block, most blocks); rawmodule's own, a block of two warps with
# at most two blocks (every grid-stride loop wraps), and three warps (96: no power of two) with one block
GEOMETRIES = {"emulated": (rawmodule.THREADS, rawmodule.MAX_BLOCKS), "emulated-64x2": (64, 2),
              "emulated-96x1": (96, 1)}


@pytest.fixture(scope="module", params=[pytest.param("cuda", marks=pytest.mark.gpu), *GEOMETRIES])
def gpu(request):
    """The backend under test: the GPU's, or the emulated RawKernel tier at one launch geometry."""
    if request.param == "cuda":
        if not mt.cuda.is_available():
            pytest.skip("no CUDA device (CuPy, an NVIDIA driver and a GPU are needed)")
        yield get_backend("cuda")
        return
    if not cuda_emulation.available():
        pytest.skip("the CUDA emulation needs g++")
    threads, max_blocks = GEOMETRIES[request.param]
    with cuda_emulation.installed(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(rawmodule, "THREADS", threads)
        patch.setattr(rawmodule, "MAX_BLOCKS", max_blocks)
        yield cuda_emulation.EmulatedCudaBackend()


@pytest.fixture
def launched(monkeypatch):
    """The kernel templates launched during the test, in order."""
    names: list[str] = []
    real = rawmodule.launch

    def spy(template, *args, **kwargs):
        names.append(template)
        return real(template, *args, **kwargs)

    monkeypatch.setattr(rawmodule, "launch", spy)
    return names


def on_both(gpu, name: str, *args: Any) -> tuple[Any, Any]:
    """(GPU result moved to the host, CPU result) of backend method ``name`` on the same host arguments.
    With 16-bit float arguments, the CPU computes in float32 from the same values and rounds its float
    results to their dtype, as the kernels do (float accumulation, one rounding at the store)."""
    on_device = [gpu.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    low = next((a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype in LOW), None)
    on_cpu = [a.astype(np.float32) if low is not None and isinstance(a, np.ndarray) and a.dtype == low else a
              for a in args]
    want = getattr(CPU, name)(*on_cpu)
    return to_host(gpu, getattr(gpu, name)(*on_device)), want if low is None else rounded(want, low)


def rounded(result: Any, dtype: Any) -> Any:
    """float32 arrays of a result rounded to ``dtype`` (index arrays and None kept)."""
    if isinstance(result, tuple):
        return tuple(rounded(r, dtype) for r in result)
    return result.astype(dtype) if isinstance(result, np.ndarray) and result.dtype == np.float32 else result


def to_host(gpu, result: Any) -> Any:
    if isinstance(result, tuple):
        return tuple(to_host(gpu, r) for r in result)
    return None if result is None else gpu.to_numpy(result)


def assert_close(got: Any, want: Any, dtype: Any, scale: float = 1.0) -> None:
    """Same shape and dtype, values within TOL[dtype] (atol times ``scale``, the size of the values)."""
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol["rtol"],
                               atol=tol["atol"] * scale)


def normal(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------------------------------ compilation
@pytest.mark.parametrize("file", sorted(rawmodule.KERNEL_FILES))
def test_every_name_expression_compiles_and_loads(gpu, file):
    entry = rawmodule.KERNEL_FILES[file]
    for template in entry.templates:
        for dtype in entry.dtypes:
            kernel = rawmodule.load_kernel(template, dtype)
            assert kernel.max_threads_per_block >= rawmodule.THREADS, (template, dtype)


# ------------------------------------------------------------------------------------------ activations
def _x(dtype):
    """Normal values, exact zeros and large magnitudes (sigmoid and gelu tails), in a non-square shape."""
    x = normal(6, 37, dtype=dtype) * 3
    x[0, :5] = [0, -0.0, 40, -40, 1e-3]
    x[1, :4] = [-700 if dtype == np.float64 else -80, 700 if dtype == np.float64 else 80, -9, 9]
    return x


ACTIVATION_CASES = {
    # name: (method, arguments built from x and gy, the kernel that must run)
    "relu_backward": ("relu_backward", lambda x, gy: (gy, np.maximum(x, 0)), "relu_backward"),
    "leaky_relu": ("leaky_relu", lambda x, gy: (x, 0.01), "leaky_relu_forward"),
    "leaky_relu_negative_slope": ("leaky_relu", lambda x, gy: (x, -0.3), "leaky_relu_forward"),
    "leaky_relu_backward": ("leaky_relu_backward", lambda x, gy: (gy, x, 0.2), "leaky_relu_backward"),
    "sigmoid": ("sigmoid", lambda x, gy: (x,), "sigmoid_forward"),
    "sigmoid_backward": ("sigmoid_backward", lambda x, gy: (gy, CPU.sigmoid(x).astype(x.dtype)),
                         "sigmoid_backward"),
    "tanh_backward": ("tanh_backward", lambda x, gy: (gy, np.tanh(x).astype(x.dtype)), "tanh_backward"),
    "gelu": ("gelu", lambda x, gy: (x, "none"), "gelu_forward"),
    "gelu_tanh": ("gelu", lambda x, gy: (x, "tanh"), "gelu_forward"),
    "gelu_backward": ("gelu_backward", lambda x, gy: (gy, x, "none"), "gelu_backward"),
    "gelu_tanh_backward": ("gelu_backward", lambda x, gy: (gy, x, "tanh"), "gelu_backward"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(ACTIVATION_CASES))
def test_activation(gpu, launched, case, dtype):
    method, make_args, kernel = ACTIVATION_CASES[case]
    x = _x(dtype)
    got, want = on_both(gpu, method, *make_args(x, normal(*x.shape, dtype=dtype)))
    assert_close(got, want, dtype, scale=10)  # outputs reach |x| = 40
    assert launched == [kernel]


def test_mixed_dtypes_fall_back(gpu, launched):
    """A kernel takes one dtype: float16 gradients of a float32 output go to the generic body."""
    x = _x(np.float32)
    gy = normal(*x.shape, dtype=np.float16)
    got = gpu.to_numpy(gpu.sigmoid_backward(gpu.asarray(gy), gpu.asarray(CPU.sigmoid(x))))
    want = CPU.sigmoid_backward(gy, CPU.sigmoid(x))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert launched == []


# ------------------------------------------------------------------------------------ softmax family
def _logits(rows_shape: tuple[int, ...], cols: int, dtype: Any) -> np.ndarray:
    """Normal logits plus rows a naive softmax would overflow or underflow on, and -inf entries."""
    x = normal(*rows_shape, cols, dtype=dtype) * 4
    flat = x.reshape(-1, cols)
    flat[0, :3] = [1e4, -1e4, 0][:cols]
    if flat.shape[0] > 1:
        flat[1] = -3e4
        flat[1, cols // 2] = -2.99e4
    if flat.shape[0] > 2 and cols > 1:
        flat[2, 1:] = -np.inf  # masked positions: one finite entry left
    return x


SOFTMAX_SHAPES = [((4,), 7), ((3, 5), 100), ((3,), 1000), ((2,), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows_shape,cols", SOFTMAX_SHAPES)
@pytest.mark.parametrize("method", ["softmax", "log_softmax"])
def test_softmax_forward_and_backward(gpu, launched, method, rows_shape, cols, dtype):
    x = _logits(rows_shape, cols, dtype)
    got, y = on_both(gpu, method, x, -1)
    finite = np.isfinite(y)  # log_softmax is -inf at the masked entries, on both
    assert np.array_equal(np.isfinite(got), finite)
    scale = 100 if method == "log_softmax" else 1  # log-probabilities reach -2e4 in the extreme rows
    assert_close(np.where(finite, got, 0), np.where(finite, y, 0), dtype, scale=scale)
    gy = normal(*x.shape, dtype=dtype)
    got, want = on_both(gpu, f"{method}_backward", gy, y, x.ndim - 1)
    assert_close(got, want, dtype)
    assert launched == [f"{method}_forward", f"{method}_backward"]


@pytest.mark.parametrize("method", ["softmax", "log_softmax"])
def test_softmax_along_another_axis_falls_back(gpu, launched, method):
    x = normal(5, 6, 3)
    got, want = on_both(gpu, method, x, 1)
    assert_close(got, want, np.float64)
    assert launched == []


# -------------------------------------------------------------------------------------- cross-entropy
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.15])
def test_softmax_cross_entropy(gpu, launched, dtype, weighted, ignore_index, label_smoothing):
    n, c = 9, 45
    logits = _logits((n,), c, dtype)
    target = rng.integers(0, c, n)
    target[[3, 7]] = ignore_index  # rows 3 and 7 are ignored (ignore_index 2 is also a real class)
    weight = rng.uniform(0.2, 2.0, c).astype(dtype) if weighted else None
    (loss, log_probs), (want_loss, want_log_probs) = on_both(
        gpu, "softmax_cross_entropy", logits, target, weight, ignore_index, label_smoothing)
    finite = np.isfinite(want_log_probs)
    assert_close(np.where(finite, log_probs, 0), np.where(finite, want_log_probs, 0), dtype, scale=1e5)
    assert np.array_equal(np.isfinite(loss), np.isfinite(want_loss))
    assert_close(np.where(np.isfinite(want_loss), loss, 0), np.where(np.isfinite(want_loss), want_loss, 0),
                 dtype, scale=1e4)
    assert loss[3] == 0 and loss[7] == 0

    g = normal(n, dtype=dtype)
    got, want = on_both(gpu, "softmax_cross_entropy_backward", g, want_log_probs, target, weight,
                        ignore_index, label_smoothing)
    assert_close(got, want, dtype)
    assert not got[[3, 7]].any()
    assert launched == ["softmax_cross_entropy_forward", "softmax_cross_entropy_backward"]


def test_softmax_cross_entropy_backward_takes_a_broadcast_gradient(gpu, launched):
    """'mean' reduction hands the backward a broadcast (stride 0) gradient."""
    logits, target = normal(6, 5), rng.integers(0, 5, 6)
    _, log_probs = CPU.softmax_cross_entropy(logits, target, None, -100, 0.0)
    g = gpu.xp.broadcast_to(gpu.asarray(np.float64(1 / 6)), (6,))
    got = gpu.to_numpy(gpu.softmax_cross_entropy_backward(g, gpu.asarray(log_probs), gpu.asarray(target),
                                                          None, -100, 0.0))
    want = CPU.softmax_cross_entropy_backward(np.full(6, 1 / 6), log_probs, target, None, -100, 0.0)
    assert_close(got, want, np.float64)
    assert launched == ["softmax_cross_entropy_backward"]


def test_softmax_cross_entropy_out_of_range_target_is_nan(gpu):
    """The GPU cannot raise as NumPy's indexing does: the loss and its gradient row become NaN instead."""
    logits, target = gpu.asarray(normal(3, 4)), gpu.asarray(np.array([0, 4, -1]))
    loss, log_probs = gpu.softmax_cross_entropy(logits, target, None, -100, 0.0)
    loss = gpu.to_numpy(loss)
    assert np.isfinite(loss[0]) and np.isnan(loss[1:]).all()
    gx = gpu.to_numpy(gpu.softmax_cross_entropy_backward(gpu.asarray(np.ones(3)), log_probs, target, None,
                                                         -100, 0.0))
    assert np.isfinite(gx[0]).all() and np.isnan(gx[1:]).all()


def test_cross_entropy_over_spatial_positions_falls_back(gpu, launched):
    logits, target = normal(2, 4, 3), rng.integers(0, 4, (2, 3))
    (loss, _), (want, _) = on_both(gpu, "softmax_cross_entropy", logits, target, None, -100, 0.0)
    assert_close(loss, want, np.float64)
    assert launched == []


# ------------------------------------------------------------------------------------------ convolution
CONV_CASES = {
    # name: (x shape, weight shape, stride, padding (top, bottom, left, right), dilation, groups)
    "3x3_same": ((2, 3, 9, 8), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "strided_dilated_grouped_asymmetric": ((2, 4, 11, 10), (6, 2, 3, 2), (2, 3), (0, 2, 1, 0), (2, 1), 2),
    "depthwise_5x5": ((1, 6, 7, 7), (6, 1, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 6),
    "1x1_strided": ((3, 5, 4, 6), (7, 5, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
    "kernel_larger_than_stride_with_padding": ((2, 2, 6, 5), (3, 2, 4, 3), (3, 2), (2, 1, 0, 2), (1, 2), 1),
}
NEEDS = [(True, True, True), (True, False, False), (False, True, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv2d_forward_and_backward(gpu, launched, case, dtype):
    x_shape, w_shape, stride, padding, dilation, groups = CONV_CASES[case]
    x, w, b = normal(*x_shape, dtype=dtype), normal(*w_shape, dtype=dtype), normal(w_shape[0], dtype=dtype)
    got, y = on_both(gpu, "conv2d", x, w, b, stride, padding, dilation, groups)
    assert_close(got, y, dtype, scale=10)
    assert launched == ["im2col"]
    gy = normal(*y.shape, dtype=dtype)
    for needs in NEEDS:
        launched.clear()
        got, want = on_both(gpu, "conv2d_backward", gy, x, w, stride, padding, dilation, groups, needs)
        for g, e in zip(got, want):
            assert (g is None) == (e is None)
            if e is not None:
                assert_close(g, e, dtype, scale=30)
        assert launched == ["col2im"] * needs[0] + ["im2col"] * needs[1]


CONV_TRANSPOSE_CASES = {
    # name: (x shape, weight shape (C_in, C_out / groups, kH, kW), stride, padding, output_padding, dilation,
    #        groups)
    "stride2_output_padding": ((2, 4, 5, 6), (4, 3, 3, 3), (2, 2), (1, 1), (1, 0), (1, 1), 1),
    "grouped_dilated": ((1, 6, 4, 4), (6, 2, 3, 2), (3, 2), (0, 1), (2, 1), (1, 2), 2),
    "stride1_no_padding": ((2, 3, 3, 5), (3, 2, 2, 4), (1, 1), (0, 0), (0, 0), (1, 1), 1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CONV_TRANSPOSE_CASES))
def test_conv_transpose2d_forward_and_backward(gpu, launched, case, dtype):
    x_shape, w_shape, stride, padding, output_padding, dilation, groups = CONV_TRANSPOSE_CASES[case]
    x, w = normal(*x_shape, dtype=dtype), normal(*w_shape, dtype=dtype)
    b = normal(w_shape[1] * groups, dtype=dtype)
    got, y = on_both(gpu, "conv_transpose2d", x, w, b, stride, padding, output_padding, dilation, groups)
    assert_close(got, y, dtype, scale=10)
    assert launched == ["col2im"]
    gy = normal(*y.shape, dtype=dtype)
    for needs in NEEDS:
        launched.clear()
        got, want = on_both(gpu, "conv_transpose2d_backward", gy, x, w, stride, padding, output_padding,
                            dilation, groups, needs)
        for g, e in zip(got, want):
            assert (g is None) == (e is None)
            if e is not None:
                assert_close(g, e, dtype, scale=30)
        assert launched == (["im2col"] if needs[0] or needs[1] else [])


# -------------------------------------------------------------------------------------------- pooling
def _pool_input(dtype, kind: str) -> np.ndarray:
    x = normal(2, 3, 9, 8, dtype=dtype)
    if kind == "ties":  # three values only: nearly every window has a tie for its maximum
        x = rng.integers(0, 3, x.shape).astype(dtype)
    elif kind == "nan":  # single NaNs, and two NaNs in one corner (the last one must win)
        x[0, 0, 0, 0] = x[0, 1, 4, 4] = x[1, 2, 0, 1] = np.nan
        x[1, 0, 2, 2] = x[1, 0, 3, 3] = np.nan
    elif kind == "neg_inf":  # whole windows of -inf next to the padding: the first valid element is chosen
        x[0, 0, :3, :3] = -np.inf
        x[1, 1] = -np.inf
    return x


MAX_POOL_CASES = {
    # name: (kernel, stride, padding, dilation, ceil_mode)
    "3x3_stride2_pad1": ((3, 3), (2, 2), (1, 1), (1, 1), False),
    "2x3_dilated_ceil": ((2, 3), (2, 1), (1, 1), (2, 1), True),
    "3x2_ceil_pad": ((3, 2), (3, 2), (1, 0), (1, 1), True),
    "2x2_overlapping": ((2, 2), (1, 1), (0, 0), (1, 1), False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["normal", "ties", "nan", "neg_inf"])
@pytest.mark.parametrize("case", sorted(MAX_POOL_CASES))
def test_max_pool2d_forward_and_backward(gpu, launched, case, kind, dtype):
    kernel, stride, padding, dilation, ceil_mode = MAX_POOL_CASES[case]
    x = _pool_input(dtype, kind)
    geometry = (kernel, stride, padding, dilation)
    (y, offsets), (want_y, want_offsets) = on_both(gpu, "max_pool2d", x, *geometry, ceil_mode)
    assert y.dtype == want_y.dtype and np.array_equal(y, want_y, equal_nan=True)  # a selection: exact
    assert offsets.dtype == np.uint8 and np.array_equal(offsets, want_offsets)
    indices, want_indices = on_both(gpu, "max_pool2d_indices", offsets, x.shape, *geometry)
    assert indices.dtype == np.int64 and np.array_equal(indices, want_indices)
    gy = normal(*y.shape, dtype=dtype)
    got, want = on_both(gpu, "max_pool2d_backward", gy, want_offsets, x.shape, *geometry)
    # Overlapping windows send several gradients to one input element, added by atomicAdd in T (as
    # PyTorch's kernel does) in whatever order the threads arrive: each addition rounds at the size of the
    # partial sum, so the tolerance grows with the most gradients one element takes and their sizes.
    most = max(1, int(np.bincount((want_indices + np.arange(want_indices.shape[0] * want_indices.shape[1])
                                   .reshape(want_indices.shape[:2] + (1, 1)) * x.shape[2] * x.shape[3])
                                  .reshape(-1)[want_indices.reshape(-1) >= 0]).max()))
    magnitude = np.abs(CPU.max_pool2d_backward(np.abs(gy), want_offsets, x.shape, *geometry)
                       .astype(np.float64)).max()
    assert_close(got, want, dtype, scale=(most - 1) * max(magnitude, 1.0) if most > 1 else 1.0)
    assert launched == ["max_pool2d_forward", "max_pool2d_backward"]


def test_max_pool2d_windows_over_256_cells_take_the_generic_code(gpu, launched):
    """The kernels store one-byte offsets: a 17x17 window (289 cells) runs the generic code, int32 offsets."""
    x = normal(2, 3, 18, 17, dtype=np.float32)
    geometry = ((17, 17), (1, 1), (0, 0), (1, 1))
    (y, offsets), (want_y, want_offsets) = on_both(gpu, "max_pool2d", x, *geometry, False)
    assert offsets.dtype == np.int32 and np.array_equal(offsets, want_offsets) and np.array_equal(y, want_y)
    gy = normal(*y.shape, dtype=np.float32)
    got, want = on_both(gpu, "max_pool2d_backward", gy, want_offsets, x.shape, *geometry)
    assert_close(got, want, np.float32)
    assert launched == []


AVG_POOL_CASES = {
    # name: (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    "3x3_stride2_pad1": ((3, 3), (2, 2), (1, 1), False, True, None),
    "3x3_stride2_pad1_exclude_pad": ((3, 3), (2, 2), (1, 1), False, False, None),
    "2x3_ceil_exclude_pad": ((2, 3), (2, 2), (1, 1), True, False, None),
    "2x3_ceil_include_pad": ((2, 3), (2, 2), (1, 1), True, True, None),
    "divisor_override": ((3, 2), (1, 2), (1, 0), False, True, 5),
    "overlapping_no_padding": ((4, 3), (1, 1), (0, 0), False, True, None),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(AVG_POOL_CASES))
def test_avg_pool2d_forward_and_backward(gpu, launched, case, dtype):
    kernel, stride, padding, ceil_mode, count_include_pad, divisor_override = AVG_POOL_CASES[case]
    params = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    x = normal(2, 3, 9, 8, dtype=dtype)
    got, y = on_both(gpu, "avg_pool2d", x, *params)
    assert_close(got, y, dtype)
    gy = normal(*y.shape, dtype=dtype)
    got, want = on_both(gpu, "avg_pool2d_backward", gy, x.shape, *params)
    assert_close(got, want, dtype)
    assert launched == ["avg_pool2d_forward", "avg_pool2d_backward"]


# ------------------------------------------------------------------------------------------- embedding
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 3, 9])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_embedding_backward(gpu, launched, dtype, padding_idx, index_dtype):
    indices = rng.integers(0, 10, (4, 6)).astype(index_dtype)
    indices[0, :4] = [3, 3, 3, 7]  # repeats accumulate; 3 may be the padding row
    gy = normal(4, 6, 5, dtype=dtype)
    got, want = on_both(gpu, "embedding_backward", gy, indices, 10, padding_idx, False)
    assert_close(got, want, dtype)
    if padding_idx is not None:
        assert not got[padding_idx].any()
    assert launched == ["embedding_backward"]


def test_embedding_backward_in_float16_falls_back(gpu, launched):
    """embedding.cu has no __half instance (a float16 scatter-add would round at every atomic add)."""
    indices, gy = rng.integers(0, 6, (3, 4)), normal(3, 4, 2, dtype=np.float16)
    got, want = on_both(gpu, "embedding_backward", gy, indices, 6, None, False)
    assert_close(got, want, np.float16)
    assert launched == []


def test_embedding_backward_scaled_by_frequency_falls_back(gpu, launched):
    indices, gy = rng.integers(0, 6, (3, 4)), normal(3, 4, 2)
    got, want = on_both(gpu, "embedding_backward", gy, indices, 6, None, True)
    assert_close(got, want, np.float64)
    assert launched == []


# ------------------------------------------------------------------------------------------ layouts
def test_non_contiguous_inputs(gpu, launched):
    """Views (here transposed twice on the device) are made contiguous before a kernel reads them."""
    x = normal(2, 3, 8, 7, dtype=np.float32)
    x_view = gpu.asarray(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(0, 1, 3, 2)
    w = normal(4, 3, 3, 3, dtype=np.float32)
    got = gpu.to_numpy(gpu.conv2d(x_view, gpu.asarray(w), None, (1, 1), (1, 1, 1, 1), (1, 1), 1))
    assert_close(got, CPU.conv2d(x, w, None, (1, 1), (1, 1, 1, 1), (1, 1), 1), np.float32, scale=10)
    y, idx = gpu.max_pool2d(x_view, (2, 2), (2, 2), (0, 0), (1, 1), False)  # idx: the argmax offsets
    want_y, want_idx = CPU.max_pool2d(x, (2, 2), (2, 2), (0, 0), (1, 1), False)
    assert np.array_equal(gpu.to_numpy(y), want_y) and np.array_equal(gpu.to_numpy(idx), want_idx)
    assert_close(gpu.to_numpy(gpu.softmax(x_view, -1)), CPU.softmax(x, -1), np.float32)
    assert_close(gpu.to_numpy(gpu.sigmoid(x_view)), CPU.sigmoid(x), np.float32)
    assert launched == ["im2col", "max_pool2d_forward", "softmax_forward", "sigmoid_forward"]


def test_grid_stride_loops_cover_more_items_than_the_grid(gpu, monkeypatch):
    """With one block of THREADS threads, every thread (or warp, for rows) loops over many items."""
    monkeypatch.setattr(rawmodule, "MAX_BLOCKS", 1)
    x = normal(50, 300, dtype=np.float32)  # 15000 elements, 50 rows: more than 256 threads, 8 warps
    assert_close(gpu.to_numpy(gpu.sigmoid(gpu.asarray(x))), CPU.sigmoid(x), np.float32)
    assert_close(gpu.to_numpy(gpu.log_softmax(gpu.asarray(x), -1)), CPU.log_softmax(x, -1), np.float32,
                 scale=10)
    x4, w = normal(2, 3, 20, 20), normal(4, 3, 3, 3)
    got = gpu.to_numpy(gpu.conv2d(gpu.asarray(x4), gpu.asarray(w), None, (1, 1), (1, 1, 1, 1), (1, 1), 1))
    assert_close(got, CPU.conv2d(x4, w, None, (1, 1), (1, 1, 1, 1), (1, 1), 1), np.float64)


def test_empty_inputs(gpu):
    """No launch for zero work items (a zero-block grid is an error), and the shapes stay right."""
    assert gpu.to_numpy(gpu.sigmoid(gpu.asarray(np.zeros((0, 3), np.float32)))).shape == (0, 3)
    assert gpu.to_numpy(gpu.softmax(gpu.asarray(np.zeros((0, 4), np.float32)), -1)).shape == (0, 4)


@pytest.mark.parametrize("dtype", LOW)
def test_16_bit_kernels_accumulate_in_float(gpu, launched, dtype):
    """A float16 sum stalls at 2048 (2048 + 1 rounds back to 2048), a bfloat16 one at 256: the row sums of
    3,000 ones per lane give log(96,000) only when the kernel accumulates in float."""
    x = np.zeros((2, 32 * 3000), dtype)
    got = gpu.to_numpy(gpu.log_softmax(gpu.asarray(x), -1))
    assert got.dtype == dtype and (got == dtype(-np.log(x.shape[1]))).all()
    assert launched == ["log_softmax_forward"]


# ------------------------------------------------------------------------------------ mixed precision
def _scaled_grads(poison: bool) -> list[np.ndarray]:
    """Gradients as a scaled mixed-precision step leaves them: four dtypes of contiguous arrays (one empty),
    one strided view, sizes that do not fill a block; with ``poison``, one inf among the float16 values."""
    grads = [normal(5, 33, dtype=np.float16) * 512, normal(300, dtype=np.float16) * 512,
             normal(7, 3, dtype=np.float32) * 512, np.zeros((0, 4), np.float32),
             (normal(4, 6, dtype=np.float64) * 512)[:, ::2], normal(2, 9, dtype=np.float64) * 512,
             normal(40, dtype=bfloat16) * bfloat16(512)]
    if poison:
        grads[1][200] = np.inf
    return grads


@pytest.mark.parametrize("poison", [False, True])
def test_amp_unscale_and_check_inf(gpu, launched, poison):
    """One launch per dtype over its contiguous gradients (the strided view takes the generic body), the
    same values as the NumPy backend, found_inf on the device."""
    grads = _scaled_grads(poison)
    on_device = [gpu.asarray(g) for g in grads]
    on_device[4] = gpu.asarray(grads[4].base)[:, ::2]  # a strided view there too
    found = gpu.amp_unscale_and_check_inf(on_device, 1 / 512)
    want_found = CPU.amp_unscale_and_check_inf(grads, 1 / 512)
    assert gpu.to_numpy(found).shape == () and gpu.to_numpy(found).dtype == np.float32
    assert gpu.to_numpy(found) == want_found == float(poison)
    for got, want in zip(on_device, grads):
        np.testing.assert_array_equal(gpu.to_numpy(got), want)  # a power-of-two scale: exact on both
    assert launched == ["amp_unscale_and_check_inf"] * 4  # float16, float32, float64, bfloat16


def test_amp_unscale_in_float16_rounds_once_from_float32(gpu):
    """inv_scale is applied in float32: 3 * (1/3) rounds to 1, where float16 arithmetic (1/3 rounded to
    float16 first) would give 0.99951."""
    g = gpu.asarray(np.full(70, 3, np.float16))
    assert gpu.to_numpy(gpu.amp_unscale_and_check_inf([g], 1 / 3)) == 0
    assert (gpu.to_numpy(g) == 1).all()
