"""The CUDA backend: CuPy arrays and cuBLAS, our CuPy RawKernels (``kernels/*.cu``) and Numba CUDA kernels
(``numba_kernels/``), all on CuPy's current stream and memory pool.

This package file imports nothing heavy, so that the kernel modules can be tested without CuPy (the Numba
kernels under the CUDA simulator); the registry loads ``minitensor.backends.cuda.backend:CudaBackend`` on the
first request for a ``cuda`` device.
"""
from __future__ import annotations

from .flags import matmul  # noqa: E402  (PyTorch's torch.backends.cuda.matmul; imports no CuPy)

__all__ = ["matmul"]
