"""The Numba kernels' branch-free float32 exp and tanh (numba_kernels/elementary.py) against float64."""
from __future__ import annotations

import numpy as np
import pytest

from minitensor.backends.cpu.numba_kernels import load


@pytest.fixture(scope="module")
def kernels():
    k = load("elementary")
    if k is None:
        pytest.skip("no Numba: the NumPy bodies run, with NumPy's exp and tanh")
    return k


def _ulps(y: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(y.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)


def test_tanh_is_within_8_ulp(kernels):
    x = np.concatenate([np.linspace(-12, 12, 200001), [0.0, -0.0, 1e-30, -1e-8]]).astype(np.float32)
    y = np.empty_like(x)
    kernels.tanh_flat(x, y)
    assert _ulps(y, np.tanh(x.astype(np.float64))).max() <= 8
    special = np.array([np.nan, np.inf, -np.inf], np.float32)
    kernels.tanh_flat(special, out := np.empty_like(special))
    assert np.isnan(out[0]) and out[1] == 1 and out[2] == -1


def test_exp_is_within_1_ulp_on_the_normal_range(kernels):
    x = np.concatenate([-np.geomspace(1e-30, 87.3, 100001), np.linspace(-87.33, 0, 100001)]).astype(np.float32)
    y = np.empty_like(x)
    kernels.exp_nonpositive_flat(x, y)
    assert _ulps(y, np.exp(x.astype(np.float64))).max() <= 1


def test_exp_special_values(kernels):
    x = np.array([0.0, -0.0, -np.inf, np.nan, -87.4, -100.0, -1e30, 3.0, np.inf], np.float32)
    y = np.empty_like(x)
    kernels.exp_nonpositive_flat(x, y)
    # 1, 1, 0, NaN, then 0 where exp is subnormal or 0 (below ln(FLT_MIN)), and x > 0 clamped to 0 (the
    # kernels take exp of x - max and of -x^2 / 2 only)
    np.testing.assert_array_equal(y, [1, 1, 0, np.nan, 0, 0, 0, 1, 1])
