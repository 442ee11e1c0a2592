"""NCCL through CuPy (``cupy.cuda.nccl``): the communicator behind ``minitensor.distributed``'s ``"nccl"``
engine. CuPy is imported only when a group is made (layout rule: CuPy lives under ``backends/cuda/``)."""
from __future__ import annotations


def nccl_available() -> bool:
    try:
        from cupy.cuda import nccl
    except Exception:  # CuPy absent, or built without NCCL, or no CUDA driver: not available, never an error
        return False
    return bool(getattr(nccl, "available", True))
