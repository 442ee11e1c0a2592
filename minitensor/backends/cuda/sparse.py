"""Sparse COO on CUDA: the generic bodies, with ``cupyx.scipy.sparse`` (cuSPARSE) for the matrix product."""
from __future__ import annotations

from typing import Any

from ..generic.sparse import SparseOps


class CudaSparseOps(SparseOps):
    def _sparse_module(self) -> Any:
        import cupyx.scipy.sparse
        return cupyx.scipy.sparse
