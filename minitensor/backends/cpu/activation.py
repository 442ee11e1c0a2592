"""The CPU's ReLU on the 16-bit floats: in float32, rounded back (``linalg.in_float32``), since NumPy's float16
loops and ml_dtypes' bfloat16 ones are not vectorised (the CNN step's ReLUs and their backward took a third of
an autocast step). The same bits: those loops compute each operation in float32 and round it."""
from __future__ import annotations

from ..generic.activation import ActivationOps
from .linalg import in_float32


class CpuActivationOps(ActivationOps):
    relu = in_float32(ActivationOps.relu)
    relu_backward = in_float32(ActivationOps.relu_backward)
