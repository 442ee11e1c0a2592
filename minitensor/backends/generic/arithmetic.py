"""Comparisons, logical and bitwise ops and the float classifiers: the element-wise ops without a gradient.

Each takes arrays (or Python scalars for the second operand), broadcasts them, and returns a bool array
(comparisons, logical ops, classifiers) or an integer array (bitwise ops). Each is ``xp``'s function of the
same name, but ``bitwise_not``, which is ``xp.invert``.
"""
from __future__ import annotations

from typing import Any

from . import xp_function

Array = Any


class ComparisonOps:
    xp: Any
    # (a, b) -> bool array
    equal = xp_function("equal")
    not_equal = xp_function("not_equal")
    less = xp_function("less")
    less_equal = xp_function("less_equal")
    greater = xp_function("greater")
    greater_equal = xp_function("greater_equal")
    logical_and = xp_function("logical_and")
    logical_or = xp_function("logical_or")
    logical_xor = xp_function("logical_xor")
    # (a, b) -> integer array; bitwise_not(x) -> integer array
    bitwise_and = xp_function("bitwise_and")
    bitwise_or = xp_function("bitwise_or")
    bitwise_xor = xp_function("bitwise_xor")
    bitwise_not = xp_function("invert")
    # x -> bool array
    logical_not = xp_function("logical_not")
    isnan = xp_function("isnan")
    isinf = xp_function("isinf")
    isfinite = xp_function("isfinite")
    signbit = xp_function("signbit")  # x -> bool array: the sign bit is set (-0.0 and -nan too)
    # (a, b) -> integer array, shifted (right: arithmetic, -8 >> 1 = -4)
    left_shift = xp_function("left_shift")
    right_shift = xp_function("right_shift")
    # (a, b) -> integer array: greatest common divisor, least common multiple (both non-negative)
    gcd = xp_function("gcd")
    lcm = xp_function("lcm")
    nextafter = xp_function("nextafter")  # (a, b) -> the next float after a towards b, in a's dtype

    def frexp(self, x: Array) -> tuple[Array, Array]:
        """(mantissa, exponent) with x = mantissa * 2^exponent, 0.5 <= |mantissa| < 1 (0, inf, nan: exponent
        0); the exponent as int32. bfloat16 goes through float32, where its mantissa is exact."""
        m, e = self.xp.frexp(x if x.dtype.kind == "f" else x.astype(self.xp.float32))
        return m.astype(x.dtype, copy=False), e.astype(self.xp.int32, copy=False)

    def isclose(self, a: Array, b: Array, rtol: float, atol: float, equal_nan: bool) -> Array:
        """|a - b| <= atol + rtol |b|, or a == b (equal infinities); nan matches nan only with equal_nan."""
        if a.dtype.kind == "b":  # bools have no difference: closeness is equality
            return self.xp.equal(a, b)
        return self.xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
