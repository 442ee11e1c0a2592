"""The CPU's matrix products for the 16-bit floats: NumPy has no float16 or bfloat16 GEMM (float16's runs
without BLAS; ml_dtypes' bfloat16 matmul returns float32, at half float32's speed), so the GEMM-based ops
(matmul, einsum, conv) run on them in float32 and cast the results back. ``in_float32`` is the one place that does
it; the saved activations stay 16-bit, which is where autocast's memory saving comes from on the CPU.
Max-pooling takes it too (``pooling.py``): NumPy's float16 loops and ml_dtypes' bfloat16 ones are not
vectorised, and the two casts cost less than those passes (a max is exact in float32, and those loops add in
float32 and round each sum too)."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from ..generic.linalg import LinalgOps

F = TypeVar("F", bound=Callable[..., Any])


def in_float32(method: F) -> F:
    """``method(self, first, *args)`` run in float32 when ``first`` is float16 or bfloat16 (its arrays of
    that dtype cast up), its float32 results cast back to that dtype (others, as max-pool's integer
    offsets, kept); other dtypes pass straight through."""

    @functools.wraps(method)
    def run(self: Any, first: Any, *args: Any, **kwargs: Any) -> Any:
        dt = first.dtype
        if not is_16_bit(dt):
            return method(self, first, *args, **kwargs)
        up = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == dt else a for a in args]
        out = method(self, first.astype(np.float32), *up, **kwargs)
        if isinstance(out, tuple):
            return tuple(o.astype(dt) if o is not None and o.dtype == np.float32 else o for o in out)
        return out.astype(dt)

    return run  # type: ignore[return-value]


def is_16_bit(dt: np.dtype) -> bool:
    """float16 or bfloat16 (ml_dtypes': NumPy kind "V")."""
    return dt.itemsize == 2 and dt.kind in "fV"


class CpuLinalgOps(LinalgOps):
    """``matmul`` and ``einsum`` through BLAS in float32 for the 16-bit floats."""

    matmul = in_float32(LinalgOps.matmul)

    def einsum(self, equation: str, operands: Sequence[Any]) -> Any:
        """As ``LinalgOps.einsum``; 16-bit operands in float32 (NumPy's einsum has no bfloat16 loop)."""
        dt = operands[0].dtype if operands else None
        if dt is None or not is_16_bit(dt):
            return super().einsum(equation, operands)
        return super().einsum(equation, [o.astype(np.float32) if o.dtype == dt else o for o in operands]).astype(dt)
