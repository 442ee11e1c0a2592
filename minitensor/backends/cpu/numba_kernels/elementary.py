"""Branch-free float32 exp, tanh and sigmoid that LLVM vectorises inside the kernels' loops: Numba has no
vector math library here (no SVML), and a loop calling libm's scalar expf or tanhf stays scalar (tanhf took
17 ns an element, 100x the rational below). Constants are float32 so that the arithmetic stays float32.

- ``exp_nonpositive``: exp on x <= 0, the only exps the kernels take (softmax's x - max, GELU's -x^2 / 2).
  Cephes' expf: x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts, so r is exact), a degree-5 polynomial
  for e^r, times 2^n built in the exponent bits. Within 1 ulp of exp (NumPy's float32 exp: 2.3 ulp, both
  measured against float64 on 196608 points of [-30, 0]); below ln(FLT_MIN) = -87.34, where exp is
  subnormal or 0, it gives 0; NaN stays NaN; x > 0 is clamped to 0 (gives 1).
- ``row_sum``: a float32 sum with reassociation allowed, so that it vectorises (softmax's and cross-entropy's
  row sums).
- ``tanh``: Eigen's rational approximation (``generic_fast_tanh_float``: odd degree-13 over even degree-6 on x
  clamped to +-7.905, where tanh rounds to +-1 in float32), within 6 ulp; ``sigmoid`` = (1 + tanh(x / 2)) / 2.
"""
from __future__ import annotations

import functools
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False)


@intrinsic
def i32_as_f32(typingctx: Any, bits: Any) -> Any:
    """The float32 whose bits are the int32 ``bits`` (LLVM's bitcast, which vectorises)."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


_f = np.float32
LOG2E, LN2_HI, LN2_LO = _f(1.44269504088896341), _f(0.693359375), _f(-2.12194440e-4)
E5, E4, E3, E2, E1, E0 = _f(1.9875691500e-4), _f(1.3981999507e-3), _f(8.3334519073e-3), \
    _f(4.1665795894e-2), _f(1.6666665459e-1), _f(5.0000001201e-1)
EXP_LOW, ZERO, HALF, ONE = _f(-87.33654), _f(0.0), _f(0.5), _f(1.0)
EXPONENT_BIAS, MANTISSA_BITS = np.int32(127), np.int32(23)


@jit
def exp_nonpositive(x):  # pragma: no cover - compiled
    xc = min(max(x, EXP_LOW), ZERO)  # NaN stays NaN (Numba's max and min keep their first argument's NaN)
    n = np.floor((xc if xc == xc else ZERO) * LOG2E + HALF)  # a finite n, so the int conversion is defined
    r = xc - n * LN2_HI - n * LN2_LO
    p = (((((E5 * r + E4) * r + E3) * r + E2) * r + E1) * r + E0) * (r * r) + r + ONE
    p *= i32_as_f32((np.int32(n) + EXPONENT_BIAS) << MANTISSA_BITS)  # 2^n, n in [-126, 0]
    return ZERO if x < EXP_LOW else p  # -inf and the subnormal range give 0


A1, A3, A5, A7 = _f(4.89352455891786e-03), _f(6.37261928875436e-04), _f(1.48572235717979e-05), \
    _f(5.12229709037114e-08)
A9, A11, A13 = _f(-8.60467152213735e-11), _f(2.00018790482477e-13), _f(-2.76076847742355e-16)
B0, B2, B4, B6 = _f(4.89352518554385e-03), _f(2.26843463243900e-03), _f(1.18534705686654e-04), \
    _f(1.19825839466702e-06)
TANH_CLAMP = _f(7.90531110763549805)


@jit
def tanh(x):  # pragma: no cover - compiled
    x = min(max(x, -TANH_CLAMP), TANH_CLAMP)  # NaN stays NaN
    x2 = x * x
    p = ((((((A13 * x2 + A11) * x2 + A9) * x2 + A7) * x2 + A5) * x2 + A3) * x2 + A1) * x
    return p / (((B6 * x2 + B4) * x2 + B2) * x2 + B0)


@jit
def sigmoid(x):  # pragma: no cover - compiled
    return HALF + HALF * tanh(HALF * x)


# jit, with the additions free to reassociate (no other fast-math: NaN and inf keep their meaning)
reassociating_jit = functools.partial(numba.njit, cache=True, nogil=True, error_model="numpy", _nrt=False,
                                      fastmath={"reassoc", "contract"})


@reassociating_jit
def row_sum(a, n):  # pragma: no cover - compiled
    """a[0] + ... + a[n - 1] in a's dtype, in whatever order LLVM's vector loop adds them."""
    total = ZERO
    for j in range(n):
        total += a[j]
    return total


@jit
def tanh_flat(x, y):  # pragma: no cover - compiled
    """y = tanh(x) on flat arrays (for the tests of the approximation)."""
    for k in range(x.size):
        y[k] = tanh(x[k])


@jit
def exp_nonpositive_flat(x, y):  # pragma: no cover - compiled
    """y = exp_nonpositive(x) on flat arrays (for the tests of the approximation)."""
    for k in range(x.size):
        y[k] = exp_nonpositive(x[k])
