"""The matrix products on CUDA: the generic ``matmul`` (``cupy.matmul``, cuBLAS) unchanged, which the conv
GEMMs also go through, with float16 products accumulated in float32 on Tensor Cores.

How CuPy picks the accumulation (``cupy/_core/_routines_linalg.pyx``): a float16 ``matmul`` of batched
(> 2-D) operands calls ``cublasGemmStridedBatchedEx`` / ``cublasGemmBatchedEx`` with
``CUBLAS_COMPUTE_32F`` on compute capability >= 7.0 (and computes in float32 from upcast copies below that);
a 2-D one goes through ``dot`` -> ``tensordot_core_v11`` -> ``cublasGemmEx``, whose compute type comes from
CuPy's per-dtype switch ``set_compute_type`` / ``get_compute_type``: ``CUBLAS_COMPUTE_32F`` unless the switch
says ``COMPUTE_TYPE_PEDANTIC`` (``CUBLAS_COMPUTE_32F_PEDANTIC``: no Tensor Cores), with
``CUBLAS_GEMM_DEFAULT_TENSOR_OP`` for float16 on compute capability >= 7.0. ``CUPY_TF32`` only concerns
float32. The backend pins the float16 switch to ``COMPUTE_TYPE_FP32``, so that the choice is ours (float32
accumulation, Tensor Cores allowed, as PyTorch's default for half GEMMs) whatever the switch held before.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def accumulate_half_gemms_in_float32(cupy: Any) -> bool:
    """Set CuPy's GEMM compute type for float16 to ``COMPUTE_TYPE_FP32`` (``cupy`` is the module, passed in
    so that this file imports no CuPy). False, changing nothing, for a CuPy without the switch."""
    linalg = getattr(getattr(cupy, "_core", None), "_routines_linalg", None)
    set_compute_type = getattr(linalg, "set_compute_type", None)
    fp32 = getattr(linalg, "COMPUTE_TYPE_FP32", None)
    if set_compute_type is None or fp32 is None:
        return False
    set_compute_type(np.float16, fp32)
    return True
