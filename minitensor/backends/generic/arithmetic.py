"""Comparisons, logical and bitwise ops and the float classifiers: the element-wise ops without a gradient.

Each takes arrays (or Python scalars for the second operand), broadcasts them, and returns a bool array
(comparisons, logical ops, classifiers) or an integer array (bitwise ops).
"""
from __future__ import annotations

from typing import Any

Array = Any


class ComparisonOps:
    xp: Any

    def equal(self, a: Array, b: Any) -> Array:
        return self.xp.equal(a, b)

    def not_equal(self, a: Array, b: Any) -> Array:
        return self.xp.not_equal(a, b)

    def less(self, a: Array, b: Any) -> Array:
        return self.xp.less(a, b)

    def less_equal(self, a: Array, b: Any) -> Array:
        return self.xp.less_equal(a, b)

    def greater(self, a: Array, b: Any) -> Array:
        return self.xp.greater(a, b)

    def greater_equal(self, a: Array, b: Any) -> Array:
        return self.xp.greater_equal(a, b)

    def logical_and(self, a: Array, b: Any) -> Array:
        return self.xp.logical_and(a, b)

    def logical_or(self, a: Array, b: Any) -> Array:
        return self.xp.logical_or(a, b)

    def logical_xor(self, a: Array, b: Any) -> Array:
        return self.xp.logical_xor(a, b)

    def logical_not(self, x: Array) -> Array:
        return self.xp.logical_not(x)

    def bitwise_and(self, a: Array, b: Any) -> Array:
        return self.xp.bitwise_and(a, b)

    def bitwise_or(self, a: Array, b: Any) -> Array:
        return self.xp.bitwise_or(a, b)

    def bitwise_xor(self, a: Array, b: Any) -> Array:
        return self.xp.bitwise_xor(a, b)

    def bitwise_not(self, x: Array) -> Array:
        return self.xp.invert(x)

    def left_shift(self, a: Array, b: Any) -> Array:
        return self.xp.left_shift(a, b)

    def right_shift(self, a: Array, b: Any) -> Array:
        """Arithmetic shift: negative values stay negative (-8 >> 1 = -4)."""
        return self.xp.right_shift(a, b)

    def isclose(self, a: Array, b: Array, rtol: float, atol: float, equal_nan: bool) -> Array:
        """|a - b| <= atol + rtol |b|, or a == b (equal infinities); nan matches nan only with equal_nan."""
        if a.dtype.kind == "b":  # bools have no difference: closeness is equality
            return self.xp.equal(a, b)
        return self.xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)

    def isnan(self, x: Array) -> Array:
        return self.xp.isnan(x)

    def isinf(self, x: Array) -> Array:
        return self.xp.isinf(x)

    def isfinite(self, x: Array) -> Array:
        return self.xp.isfinite(x)
