"""The CPU's ReLU on the 16-bit floats, on their bits (int16 views): NumPy's float16 loops and ml_dtypes' bfloat16
ones are not vectorised (the CNN step's ReLUs and their backward took a third of an autocast step), and a
float32 round trip would make float32 temporaries of the activations. A 16-bit float is below zero exactly when
its bits, read as an int16, are at most those of -inf (the other negative int16 patterns are NaNs); it is above
zero when its bits lie in (0, those of +inf]."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..generic.activation import ActivationOps
from .linalg import is_16_bit

Array = Any


def _bits(value: float, dtype: np.dtype) -> int:
    """``value``'s bit pattern in ``dtype`` (float16 or bfloat16) read as an int16."""
    return int(np.array(value, dtype=dtype).view(np.int16))


class CpuActivationOps(ActivationOps):
    def relu(self, x: Array) -> Array:
        """As ``ActivationOps.relu``; 16-bit x keeps the bits of NaN and of values above -inf's bits (NaN and
        x >= +0) and zeroes the rest (negatives and -0 give +0, as float32's maximum and PyTorch)."""
        if not is_16_bit(x.dtype):
            return super().relu(x)
        bits = x.view(np.int16)
        return (bits * (bits > _bits(-np.inf, x.dtype))).view(x.dtype)

    def relu_backward(self, gy: Array, y: Array) -> Array:
        """As ``ActivationOps.relu_backward``; 16-bit gy passes where y > 0 (exactly the float comparison) and
        is +0 elsewhere, as PyTorch's threshold_backward (an infinite gy there gives 0, not NaN)."""
        if not (is_16_bit(gy.dtype) and y.dtype == gy.dtype):
            return super().relu_backward(gy, y)
        bits = y.view(np.int16)
        return (gy.view(np.int16) * ((bits > 0) & (bits <= _bits(np.inf, y.dtype)))).view(gy.dtype)
