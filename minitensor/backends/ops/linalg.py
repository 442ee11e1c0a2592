"""Matrix products (BLAS on the CPU, cuBLAS through CuPy on CUDA)."""
from __future__ import annotations

from typing import Any

Array = Any


class LinalgOps:
    xp: Any

    def matmul(self, a: Array, b: Array) -> Array:
        """a @ b with NumPy's batch broadcasting; pass transposed views (``a.T``), never copies."""
        return self.xp.matmul(a, b)
