"""``_amp_foreach_non_finite_check_and_unscale_`` (PyTorch's name, what GradScaler.unscale_ runs): gradients
unscaled in place, found_inf set on an inf or NaN and kept otherwise. The backend method under it has its
parity case in tests/backends and its CUDA kernel in tests/cuda/test_cuda_raw_ops.py."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

unscale_ = mt._amp_foreach_non_finite_check_and_unscale_


def _grads(rng):
    return [rng.standard_normal((3, 4)).astype(np.float32) * 64, rng.standard_normal(5).astype(np.float16) * 64]


def test_unscales_in_place_and_flags_non_finite_values():
    rng = np.random.default_rng(0)
    values = _grads(rng)
    grads, found = [mt.tensor(v) for v in values], mt.zeros(1)
    unscale_(grads, found, mt.tensor([1 / 64]))
    assert found.tolist() == [0.0]
    for g, v in zip(grads, values):
        assert g.dtype == mt.tensor(v).dtype
        np.testing.assert_array_equal(g.numpy(), v / v.dtype.type(64))
    poisoned = [mt.tensor(v) for v in values]
    poisoned[1][2] = float("nan")
    unscale_(poisoned, found, 0.5)
    assert found.tolist() == [1.0]
    unscale_([mt.tensor(v) for v in values], found, 0.5)  # clean gradients leave the flag as it was
    assert found.tolist() == [1.0]


def test_bfloat16_gradients_are_unscaled_in_float32():
    """inv_scale applied in float32 and rounded once, as PyTorch's opmath (bfloat16 arithmetic, 1/3 rounded to
    bfloat16 first, differs on a good part of these values)."""
    from ml_dtypes import bfloat16
    B = mt.tensor([0.0]).device.backend
    values = np.random.default_rng(2).standard_normal(200).astype(bfloat16)
    g = B.asarray(values.copy())
    assert B.to_numpy(B.amp_unscale_and_check_inf([g], 1 / 3)) == 0
    assert g.dtype == bfloat16
    np.testing.assert_array_equal(g, (values.astype(np.float32) * np.float32(1 / 3)).astype(bfloat16))
    assert (g != values * bfloat16(1 / 3)).any()


def test_bad_arguments_are_named():
    with pytest.raises(RuntimeError, match="1-element"):
        unscale_([mt.ones(2)], mt.zeros(2), 1.0)
    unscale_([], mt.zeros(1), 1.0)  # nothing to do


@pytest.mark.torch
def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    values = _grads(rng)
    values[0][1, 2] = np.inf
    grads, found = [mt.tensor(v) for v in values], mt.zeros(1)
    t_grads, t_found = [torch.tensor(v) for v in values], torch.zeros(1)
    unscale_(grads, found, mt.tensor([0.125]))
    torch._amp_foreach_non_finite_check_and_unscale_(t_grads, t_found, torch.tensor([0.125]))
    assert found.tolist() == t_found.tolist()
    for g, t in zip(grads, t_grads):
        np.testing.assert_array_equal(g.numpy(), t.numpy())
