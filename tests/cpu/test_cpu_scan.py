"""The CPU's scans (``ufunc.accumulate``) and the generic log-step scan that CuPy runs agree with NumPy's
sequential references, so both bodies of cummax, cummin and logcumsumexp are checked on any machine."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.backends.generic.reduce import ReduceOps


class GenericScans(ReduceOps):
    """The generic bodies on NumPy (the CPU backend overrides their ``_scan``)."""
    xp = np


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=9),
                    elements=st.floats(-50, 50) | st.just(np.nan)), data=st.data())
def test_generic_and_cpu_scans_match_numpy(x, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    cpu = mt.device("cpu").backend
    for backend in (GenericScans(), cpu):
        for name, accumulate in (("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)):
            values, indices = getattr(backend, name)(x, axis)
            np.testing.assert_array_equal(values, accumulate(x, axis=axis))
            ref_values, ref_indices = getattr(cpu, name)(x, axis)
            np.testing.assert_array_equal(indices, ref_indices)
        finite = np.nan_to_num(x)
        np.testing.assert_allclose(backend.logcumsumexp(finite, axis), np.logaddexp.accumulate(finite, axis=axis),
                                   rtol=1e-13)


# ---- cumsum / cumprod of the low-precision floats: accumulated in the wider dtype, as PyTorch's CPU kernels

WIDER = {"float32": np.float64, "float16": np.float32, "bfloat16": np.float32}


def _wide_reference(x: np.ndarray, ufunc, start: float) -> np.ndarray:
    """Each running value in the wider dtype, combined with PyTorch's initial value, rounded once."""
    wide = WIDER[x.dtype.name]
    with np.errstate(all="ignore"):  # inf - inf, overflow in the cast: as the op, silently
        return ufunc(ufunc.accumulate(x.astype(wide), axis=-1), wide(start)).astype(x.dtype)


def test_a_long_float32_cumsum_is_rounded_from_a_float64_running_sum():
    x = np.full(10**6, 0.1, np.float32)
    out = mt.cumsum(mt.tensor(x), 0).numpy()
    np.testing.assert_array_equal(out, np.cumsum(x.astype(np.float64)).astype(np.float32))
    assert abs(out[-1] - 1e5) < 0.01  # float32 running sums drift: 100958.34 there


def test_cumprod_recovers_from_an_intermediate_float32_overflow_as_pytorchs_does():
    x = mt.tensor([1e30, 2.25e16, 1e-30])
    assert mt.cumprod(x, 0).tolist() == [np.float32(1e30), np.inf, np.float32(2.25e16)]


def test_a_sum_starts_from_plus_zero_and_a_product_from_one():
    x = mt.tensor([-0.0, -0.0, 2.0])
    assert [np.signbit(v) for v in mt.cumsum(x, 0).numpy()] == [False, False, False]
    assert [np.signbit(v) for v in mt.cumprod(x, 0).numpy()] == [True, False, False]  # -0, (-0)(-0), 0 * 2


@settings(max_examples=40, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["float32", "float16", "bfloat16"]))
def test_low_precision_scans_match_the_wide_reference_along_any_axis(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=40))
    values = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-3, 3, width=32) | st.sampled_from(
        [0.0, -0.0, np.inf, -np.inf, np.nan])))
    axis = data.draw(st.integers(0, len(shape) - 1))
    t = mt.tensor(values).to(getattr(mt, dtype))
    x = t.numpy() if dtype != "bfloat16" else t.float().numpy()
    for name, ufunc, start in (("cumsum", np.add, 0.0), ("cumprod", np.multiply, 1.0)):
        ours = getattr(t, name)(axis).float().numpy()
        moved = np.moveaxis(x.astype(np.float32 if dtype == "bfloat16" else x.dtype), axis, -1)
        if dtype == "bfloat16":
            import ml_dtypes
            moved = moved.astype(ml_dtypes.bfloat16)
        ref = np.moveaxis(_wide_reference(moved, ufunc, start), -1, axis).astype(np.float32)
        np.testing.assert_array_equal(ours, ref, err_msg=name)


@pytest.mark.torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["float32", "float16", "bfloat16"]))
def test_low_precision_scans_are_pytorchs_bit_for_bit(data, dtype):
    torch = pytest.importorskip("torch")
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=300))
    values = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-2, 2, width=32)))
    axis = data.draw(st.integers(0, len(shape) - 1))
    theirs_in = torch.from_numpy(values).to(getattr(torch, dtype))
    ours_in = mt.tensor(theirs_in.float().numpy()).to(getattr(mt, dtype))
    for name in ("cumsum", "cumprod"):
        theirs = getattr(theirs_in, name)(axis).float().numpy()
        ours = getattr(ours_in, name)(axis).float().numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
