"""float16 GEMMs on CUDA accumulate in float32 (``backends/cuda/linalg.py``): the CuPy switch is checked
through a stand-in for CuPy's ``_core._routines_linalg`` (the configuration call, not results), and on a
GPU (marked ``gpu``) through CuPy itself and a product that float16 accumulation gets wrong."""
from __future__ import annotations

import types

import numpy as np
import pytest

import minitensor as mt
from minitensor.backends.cuda.linalg import accumulate_half_gemms_in_float32

COMPUTE_TYPE_FP32 = 4  # CuPy's value (cupy/_core/_routines_linalg.pxd)


def fake_cupy(calls: list, **linalg: object) -> types.SimpleNamespace:
    routines = types.SimpleNamespace(set_compute_type=lambda dtype, kind: calls.append((np.dtype(dtype), kind)),
                                     **linalg)
    return types.SimpleNamespace(_core=types.SimpleNamespace(_routines_linalg=routines))


def test_float16_compute_type_is_pinned_to_fp32():
    calls: list = []
    assert accumulate_half_gemms_in_float32(fake_cupy(calls, COMPUTE_TYPE_FP32=COMPUTE_TYPE_FP32))
    assert calls == [(np.dtype(np.float16), COMPUTE_TYPE_FP32)]  # only float16; float32 keeps CUPY_TF32


def test_a_cupy_without_the_switch_is_left_alone():
    calls: list = []
    assert not accumulate_half_gemms_in_float32(fake_cupy(calls))  # no COMPUTE_TYPE_FP32
    assert not accumulate_half_gemms_in_float32(types.SimpleNamespace())
    assert calls == []


@pytest.mark.gpu
def test_cuda_half_gemms_accumulate_in_float32():
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    import cupy

    from minitensor.backends import get_backend
    B = get_backend("cuda")
    linalg = cupy._core._routines_linalg
    linalg.set_compute_type(np.float16, linalg.COMPUTE_TYPE_PEDANTIC)  # what a user may have left there
    B = type(B)(B.index)
    assert linalg.get_compute_type(np.float16) == linalg.COMPUTE_TYPE_FP32
    # 3000 products of ones: a float16 running sum stalls at 2048, a float32 one is exact
    a, b = B.asarray(np.ones((2, 3000), np.float16)), B.asarray(np.ones((3000, 3), np.float16))
    assert (B.to_numpy(B.matmul(a, b)) == 3000).all()
    batched = B.matmul(B.xp.broadcast_to(a, (4, 2, 3000)), b)  # the strided-batched path
    assert (B.to_numpy(batched) == 3000).all()
