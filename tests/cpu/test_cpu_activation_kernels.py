"""The CPU's ReLU and its backward (``backends/cpu/activation.py``): the Numba loops and the bit-pattern NumPy
bodies against float64 references, on every layout a network hands them, with the special values PyTorch
pins down (NaN kept, -0 and negatives to +0, a non-finite gy zeroed where y <= 0)."""
from __future__ import annotations

from unittest import mock

import ml_dtypes
import numpy as np
import pytest

import minitensor as mt
from minitensor.backends.compiled import dense_flat
from minitensor.backends.cpu import numba_kernels
from minitensor.backends.cpu.backend import NumpyBackend

numba = numba_kernels.load("activation")
PATHS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(numba is None, reason="numba not installed"))]
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 1e-30, -1e-30]


def _path(name: str):
    """The loader as the chosen path sees it: None makes the backend take its NumPy bodies."""
    return mock.patch.object(numba_kernels, "load", numba_kernels.load if name == "numba" else lambda *_: None)


def _layouts(rng: np.random.Generator, dtype: type) -> list[np.ndarray]:
    """(4, 3, 5, 6) arrays in C order, channels-last, Fortran order, a sliced (gapped) view, and a broadcast."""
    base = np.concatenate([rng.standard_normal(4 * 3 * 5 * 6 - len(SPECIAL)), SPECIAL]).astype(dtype)
    rng.shuffle(base)
    c = base.reshape(4, 3, 5, 6)
    cl = np.ascontiguousarray(c.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    sliced = np.concatenate([c, c], axis=3)[..., ::2]
    broadcast = np.broadcast_to(c[:1], c.shape)
    return [c, cl, np.asfortranarray(c), sliced, broadcast]


def _relu_reference(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    return np.where(x64 < 0, 0.0, x64)  # PyTorch's clamp_min: NaN and -0 kept


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
def test_relu_matches_float64_on_every_layout(path, dtype):
    B, rng = NumpyBackend(), np.random.default_rng(0)
    with _path(path):
        for x in _layouts(rng, dtype):
            y = B.relu(x)
            assert y.dtype == x.dtype and y.shape == x.shape
            np.testing.assert_array_equal(y.astype(np.float64), _relu_reference(x))
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            numbers = ~np.isnan(x64)  # the sign of a zero: -0 where x is -0, as PyTorch 2.13 (+0 for negatives)
            np.testing.assert_array_equal(np.signbit(y64[numbers]), np.signbit(x64[numbers]) & (x64[numbers] == 0))
            if dense_flat(x) is not None:
                assert y.strides == x.strides  # a channels-last activation stays channels-last


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
def test_relu_backward_matches_float64_on_every_layout(path, dtype):
    B, rng = NumpyBackend(), np.random.default_rng(1)
    with _path(path):
        ys = _layouts(rng, dtype)
        for y in ys:
            for gy in _layouts(rng, dtype):  # every pairing, mismatched layouts included
                gx = B.relu_backward(gy, y)
                g64, y64 = gy.astype(np.float64), y.astype(np.float64)
                expected = np.where(y64 <= 0, 0.0, g64)  # PyTorch's test: a NaN y passes gy through
                assert gx.dtype == gy.dtype and gx.shape == gy.shape
                np.testing.assert_array_equal(gx.astype(np.float64), expected)
                assert not np.signbit(gx.astype(np.float64)[y64 <= 0]).any()


@pytest.mark.parametrize("path", PATHS)
def test_relu_module_gradient_through_a_channels_last_conv(path):
    """conv -> relu on the CPU (channels-last activations): the gradient matches float64 finite differences."""
    with _path(path):
        x = mt.randn(2, 3, 5, 5, dtype=mt.float64, requires_grad=True)
        w = mt.randn(4, 3, 3, 3, dtype=mt.float64, requires_grad=True)
        assert mt.testing.gradcheck(lambda a, b: mt.nn.functional.conv2d(a, b, padding=1).relu(), (x, w))


def test_the_loops_are_the_path_taken_when_numba_is_there():
    """Not a silent fall-back: with Numba, a float32 channels-last ReLU launches the 'relu' loop."""
    if numba is None:
        pytest.skip("numba not installed")
    y, gy = (mt.nn.functional.conv2d(mt.randn(2, 3, 4, 4), mt.randn(5, 3, 3, 3), padding=1) for _ in range(2))
    with mt.profiler.profile() as prof:  # gy channels-last as y, as max-pool's backward gives it
        mt.nn.functional.relu(y.requires_grad_()).backward(gy)
    names = {e.key for e in prof.key_averages()}
    assert {"relu", "relu_backward"} <= names, names
