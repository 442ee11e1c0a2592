"""Elementwise math: thin ``xp`` wrappers, each a place where a backend may put a fused kernel."""
from __future__ import annotations

from typing import Any

from . import xp_function

Array = Any


class ElementwiseOps:
    xp: Any

    # x -> array of x's shape
    exp = xp_function("exp")
    log = xp_function("log")
    log1p = xp_function("log1p")
    expm1 = xp_function("expm1")
    log2 = xp_function("log2")
    log10 = xp_function("log10")
    sqrt = xp_function("sqrt")
    abs = xp_function("abs")
    sign = xp_function("sign")
    sin = xp_function("sin")
    cos = xp_function("cos")
    floor = xp_function("floor")
    ceil = xp_function("ceil")
    trunc = xp_function("trunc")
    # broadcast: power(x, p), maximum(a, b), minimum(a, b), clip(x, lo, hi), where(cond, a, b)
    power = xp_function("power")
    maximum = xp_function("maximum")
    minimum = xp_function("minimum")
    clip = xp_function("clip")
    where = xp_function("where")

    def round(self, x: Array, decimals: int) -> Array:
        """Half to even, as PyTorch; ``decimals`` places (negative: tens, hundreds...)."""
        return self.xp.round(x, decimals)

    def remainder(self, a: Array, b: Array) -> Array:
        """a - floor(a / b) * b: the sign of the divisor, as Python's %."""
        return self.xp.remainder(a, b)

    def expand_dims(self, x: Array, axes: tuple[int, ...]) -> Array:
        """x with new length-1 axes at ``axes`` (positions in the result): a view."""
        return self.xp.expand_dims(x, axes)

    def squeeze(self, x: Array, axes: tuple[int, ...] | int) -> Array:
        """x without the length-1 axes ``axes``: a view."""
        return self.xp.squeeze(x, axis=axes)
