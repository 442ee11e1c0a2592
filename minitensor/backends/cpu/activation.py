"""The CPU's ReLU and its backward: one pass each (leaky ReLU and the backwards of tanh and sigmoid too, with
Numba). With Numba, a select loop (``numba_kernels/activation.py``)
over the arrays' memory in whatever dense layout they have (a convolution's channels-last output stays
channels-last); without it, a multiply on the bit patterns (integer views), which NumPy vectorises, where
``maximum`` runs at a fifth of memcpy's speed and ``where`` mispredicts a branch per element of random sign.

On the bits: a float is below zero exactly when its bits, read as a signed integer of its width, are at most
those of -inf (the other negative patterns are NaNs); it is above zero when its bits lie in (0, those of +inf].
For the 16-bit floats this also avoids NumPy's float16 and ml_dtypes' bfloat16 loops, which are not vectorised
(the CNN step's ReLUs took a third of an autocast step), and float32 temporaries.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiled import KERNEL_DTYPES, dense_flat, flat, kernel_fits, run_kernel
from ..generic.activation import ActivationOps
import minitensor.backends.cpu.numba_kernels as numba_kernels  # the loader (it imports Numba lazily)
from .parallel import over_leading_parts

# GELU's exact form is compute-bound (an erf rational, an exp): above this many elements its pass is cut into
# one part per BLAS thread. A hand-off to a pool thread costs ~55 us on a 2-vCPU VM, so a part must outlast it
# several times: at the GPT's (12, 64, 512), 92 us on one thread (AVX-512), the parts made the step slower
PARALLEL_MIN_ELEMENTS = 2 ** 20
# below this many elements NumPy's few passes cost less than a kernel's call (leaky ReLU, tanh and sigmoid
# backwards: 1.1 us against 1.9 at 64 float32, 9.0 against 4.8 at 50176)
KERNEL_MIN_ELEMENTS = 1024

Array = Any


def _bits(value: float, dtype: np.dtype) -> int:
    """``value``'s bit pattern in ``dtype`` read as a signed integer of the same width."""
    return int(np.array(value, dtype=dtype).view(_int_type(dtype)))


def _int_type(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"i{dtype.itemsize}")


def _is_float(dtype: np.dtype) -> bool:
    """A NumPy float or ml_dtypes' bfloat16 (NumPy kind "V"), whose bit patterns the rules above read."""
    return dtype.kind == "f" or (dtype.kind == "V" and dtype.itemsize == 2)


def _kernels(a: Array) -> Any:
    """The Numba loops' module for ``a``'s dtype, or None (no Numba, or a dtype they are not compiled for)."""
    return numba_kernels.load("activation") if a.dtype in KERNEL_DTYPES else None


def _gelu_kernels(approximate: str, *arrays: Array) -> Any:
    """The Numba loops for the exact GELU on float32 C-contiguous arrays of one shape, else None."""
    if approximate != "none" or arrays[0].dtype != np.float32 or not kernel_fits(*arrays):
        return None
    return numba_kernels.load("activation")


def _dense_pass(name: str, inputs: tuple[Array, ...], scalars: tuple[float, ...] = (), min_elements: int = 0
                ) -> Array | None:
    """Kernel ``name``(*inputs, *scalars, out) over the inputs' memory as flat arrays (the scalars in their
    dtype): inputs of one dtype, shape and dense layout, which the result gets; None where the loops do not
    cover them (no Numba, another dtype, a gapped or broadcast view, layouts that differ, fewer than
    ``min_elements``)."""
    first = inputs[0]
    kernels = _kernels(first) if first.size >= min_elements else None
    if kernels is None:
        return None
    flats = []
    for a in inputs:
        flat_a = dense_flat(a) if a.dtype == first.dtype and a.shape == first.shape and a.strides == first.strides \
            else None
        if flat_a is None:
            return None
        flats.append(flat_a)
    out = np.empty_like(first)
    run_kernel(name, False, getattr(kernels, name), *flats, *(first.dtype.type(s) for s in scalars),
               dense_flat(out))
    return out


class CpuActivationOps(ActivationOps):
    def relu(self, x: Array) -> Array:
        """As ``ActivationOps.relu``: keeps NaN, -0 and x >= 0, gives +0 for negatives (PyTorch's clamp_min:
        ``x < 0 ? 0 : x``); the result has x's layout."""
        y = _dense_pass("relu", (x,))
        if y is not None:
            return y
        if not _is_float(x.dtype):
            return super().relu(x)
        bits = x.view(_int_type(x.dtype))
        # the negatives (-0 excluded) are the bit patterns in (int min, -inf]: bits - 1 wraps -0 (int min) to the
        # int max, so one comparison keeps -0 and the NaNs with a sign (above -inf) and zeroes the others
        shifted = np.subtract(bits, 1, out=np.empty_like(bits))  # out=: a 0-d x still gives an array
        return np.multiply(bits, shifted >= _bits(-np.inf, x.dtype), out=shifted).view(x.dtype)

    def relu_backward(self, gy: Array, y: Array) -> Array:
        """As ``ActivationOps.relu_backward``: +0 where y <= 0 (exactly the float comparison), gy elsewhere (y > 0
        or NaN), as PyTorch's threshold_backward (an infinite or NaN gy where y <= 0 gives 0)."""
        if gy.dtype != y.dtype or not _is_float(gy.dtype):
            return super().relu_backward(gy, y)
        gx = _dense_pass("relu_backward", (gy, y))
        if gx is not None:
            return gx
        bits = y.view(_int_type(y.dtype))
        keep = (bits > _bits(-np.inf, y.dtype)) & (bits != 0)  # not y <= 0: positives and every NaN
        return (gy.view(_int_type(gy.dtype)) * keep).view(gy.dtype)

    def tanh_backward(self, gy: Array, y: Array) -> Array:
        """As ``ActivationOps.tanh_backward``, in one pass."""
        gx = _dense_pass("tanh_backward", (gy, y), (1.0,), KERNEL_MIN_ELEMENTS)
        return super().tanh_backward(gy, y) if gx is None else gx

    def sigmoid_backward(self, gy: Array, y: Array) -> Array:
        """As ``ActivationOps.sigmoid_backward``, in one pass."""
        gx = _dense_pass("sigmoid_backward", (gy, y), (1.0,), KERNEL_MIN_ELEMENTS)
        return super().sigmoid_backward(gy, y) if gx is None else gx

    def leaky_relu(self, x: Array, negative_slope: float) -> Array:
        """As ``ActivationOps.leaky_relu``, in one pass for a slope in (0, 1]."""
        y = _dense_pass("leaky_relu", (x,), (negative_slope,), KERNEL_MIN_ELEMENTS) if 0 < negative_slope <= 1 \
            else None
        return super().leaky_relu(x, negative_slope) if y is None else y

    def leaky_relu_backward(self, gy: Array, y_or_x: Array, negative_slope: float) -> Array:
        """As ``ActivationOps.leaky_relu_backward``, in one pass for a slope in [0, 1]."""
        gx = _dense_pass("leaky_relu_backward", (gy, y_or_x), (negative_slope,), KERNEL_MIN_ELEMENTS) \
            if 0 <= negative_slope <= 1 else None
        return super().leaky_relu_backward(gy, y_or_x, negative_slope) if gx is None else gx

    def gelu(self, x: Array, approximate: str) -> Array:
        """As ``ActivationOps.gelu``; the exact form on float32 C-contiguous x in one Numba pass."""
        k = _gelu_kernels(approximate, x)
        if k is None:
            return super().gelu(x, approximate)
        y = np.empty_like(x)
        run_kernel("gelu", False, over_leading_parts, k.gelu, (flat(x), flat(y)), PARALLEL_MIN_ELEMENTS)
        return y

    def gelu_backward(self, gy: Array, x: Array, approximate: str) -> Array:
        """As ``ActivationOps.gelu_backward``; the exact form on float32 in one Numba pass."""
        k = _gelu_kernels(approximate, gy, x)
        if k is None:
            return super().gelu_backward(gy, x, approximate)
        gx = np.empty_like(x)
        run_kernel("gelu_backward", False, over_leading_parts, k.gelu_backward, (flat(gy), flat(x), flat(gx)),
                   PARALLEL_MIN_ELEMENTS)
        return gx
