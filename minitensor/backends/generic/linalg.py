"""Matrix products (BLAS on the CPU, cuBLAS through CuPy on CUDA)."""
from __future__ import annotations

from typing import Any, Sequence

Array = Any


class LinalgOps:
    xp: Any

    def matmul(self, a: Array, b: Array) -> Array:
        """a @ b with NumPy's batch broadcasting; pass transposed views (``a.T``), never copies.

        A contracted dim of 1 (an outer product, e.g. the input gradient of a Linear with one output) is
        a broadcast multiply, the same numbers without a GEMM call (NumPy's takes ~10x longer there), made
        C-contiguous as matmul's result is."""
        if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 and b.shape[-2] == 1:
            return self.xp.ascontiguousarray(a * b)
        return self.xp.matmul(a, b)

    def einsum(self, equation: str, operands: Sequence[Array]) -> Array:
        """NumPy's einsum; ``optimize`` contracts pairwise through BLAS (tensordot) in a good order."""
        return self.xp.einsum(equation, *operands, optimize=len(operands) > 1)
