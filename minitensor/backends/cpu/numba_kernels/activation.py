"""ReLU, leaky ReLU and the backwards of tanh and sigmoid as one-pass Numba loops over flat arrays (the CPU's
``activation.py`` calls them).

Each loop reads its inputs and writes its output once, with a select rather than a branch, which LLVM
vectorises: memcpy's speed. NumPy's ``where(y > 0, gy, 0)`` branches per element and, on activations whose
signs are random, mispredicts half of them (6 ms for 1.6M float32 here, against 0.2 ms for this loop), and
``maximum(x, 0)`` runs at a fifth of memcpy's speed. The loops are serial: with ``prange`` a call waited for
the worker threads (0.5 ms at best for 1.6M floats, 0.1 ms serial); a memory-bound pass on 2 cores gains
little from the second one.
"""
from __future__ import annotations

import functools

import numba
import numpy as np

from .elementary import exp_nonpositive
from ...generic.activation import _ERF32_CLAMP, _ERF32_P, _ERF32_Q, _INV_SQRT_2, _INV_SQRT_2PI

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False)


@jit
def relu(x, y):  # pragma: no cover - compiled
    """y = +0 where x < 0, else x (NaN and -0 kept, as PyTorch's clamp_min). Flat arrays."""
    for i in range(x.size):
        v = x[i]
        y[i] = 0 if v < 0 else v


@jit
def relu_backward(gy, y, gx):  # pragma: no cover - compiled
    """gx = +0 where y <= 0, else gy (y > 0 or NaN), as PyTorch's threshold_backward (a NaN or infinite gy
    where y <= 0 gives 0 too)."""
    for i in range(gy.size):
        gx[i] = 0 if y[i] <= 0 else gy[i]


@jit
def tanh_backward(gy, y, one, gx):  # pragma: no cover - compiled
    """gx = gy (1 - y^2), in the generic body's order of operations; ``one`` is 1 in the arrays' dtype (an int
    literal would make the arithmetic float64)."""
    for i in range(gy.size):
        v = y[i]
        gx[i] = gy[i] * (one - v * v)


@jit
def sigmoid_backward(gy, y, one, gx):  # pragma: no cover - compiled
    """gx = gy y (1 - y), in the generic body's order of operations (``one`` as in tanh_backward)."""
    for i in range(gy.size):
        v = y[i]
        gx[i] = gy[i] * v * (one - v)


@jit
def leaky_relu(x, slope, y):  # pragma: no cover - compiled
    """y = max(x, slope x) for 0 < slope <= 1 (NaN and -0 kept, as NumPy's maximum gives them); ``slope`` in
    the arrays' dtype."""
    for i in range(x.size):
        v = x[i]
        w = v * slope
        y[i] = v if v > w else w


@jit
def leaky_relu_backward(gy, v, slope, gx):  # pragma: no cover - compiled
    """gx = gy where v > 0, slope gy elsewhere (NaN v too), for 0 <= slope <= 1."""
    for i in range(gy.size):
        g = gy[i]
        gx[i] = g if v[i] > 0 else g * slope


# ---------------------------------------------------------------------------------------- GELU
# The exact (erf) form, one float32 pass each way, where NumPy's body takes a dozen passes and temporaries (the
# erf's two Horner polynomials alone are ten). erf is the generic body's float32 rational (Eigen's, on x clamped
# to +-3.8325, clipped to [-1, 1]) without branches or libm calls, so LLVM vectorises it, and the backward's
# exp(-x^2 / 2) is elementary.py's (NumPy's exp was a pass and a temporary of its own).
_f = np.float32
P0, P1, P2, P3, P4 = (_f(c) for c in _ERF32_P)
Q0, Q1, Q2, Q3, Q4, Q5, Q6 = (_f(c) for c in _ERF32_Q)
CLAMP, INV_SQRT_2, INV_SQRT_2PI = _f(_ERF32_CLAMP), _f(_INV_SQRT_2), _f(_INV_SQRT_2PI)
HALF, ONE = _f(0.5), _f(1.0)


@jit
def erf(x):  # pragma: no cover - compiled
    xc = min(max(x, -CLAMP), CLAMP)  # NaN stays NaN
    x2 = xc * xc
    p = (((P0 * x2 + P1) * x2 + P2) * x2 + P3) * x2 + P4
    q = (((((Q0 * x2 + Q1) * x2 + Q2) * x2 + Q3) * x2 + Q4) * x2 + Q5) * x2 + Q6
    return min(max(p * xc / q, -ONE), ONE)


@jit
def gelu(x, y):  # pragma: no cover - compiled
    """y = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2 on flat arrays."""
    for k in range(x.size):
        v = x[k]
        y[k] = HALF * v * (ONE + erf(v * INV_SQRT_2))


@jit
def gelu_backward(gy, x, gx):  # pragma: no cover - compiled
    """gx = gy (Phi(x) + x phi(x)) with phi(x) = exp(-x^2 / 2) / sqrt(2 pi); flat arrays."""
    for k in range(x.size):
        v = x[k]
        phi = exp_nonpositive(-HALF * v * v) * INV_SQRT_2PI
        gx[k] = gy[k] * (HALF * (ONE + erf(v * INV_SQRT_2)) + v * phi)
