"""Elementwise math: thin ``xp`` wrappers, each a place where a backend may put a fused kernel."""
from __future__ import annotations

from typing import Any

Array = Any


class ElementwiseOps:
    xp: Any

    def exp(self, x: Array) -> Array:
        return self.xp.exp(x)

    def log(self, x: Array) -> Array:
        return self.xp.log(x)

    def log1p(self, x: Array) -> Array:
        return self.xp.log1p(x)

    def expm1(self, x: Array) -> Array:
        return self.xp.expm1(x)

    def sqrt(self, x: Array) -> Array:
        return self.xp.sqrt(x)

    def abs(self, x: Array) -> Array:
        return self.xp.abs(x)

    def sign(self, x: Array) -> Array:
        return self.xp.sign(x)

    def sin(self, x: Array) -> Array:
        return self.xp.sin(x)

    def cos(self, x: Array) -> Array:
        return self.xp.cos(x)

    def power(self, x: Array, p: Any) -> Array:
        return self.xp.power(x, p)

    def maximum(self, a: Array, b: Array) -> Array:
        return self.xp.maximum(a, b)

    def minimum(self, a: Array, b: Array) -> Array:
        return self.xp.minimum(a, b)

    def clip(self, x: Array, lo: Any, hi: Any) -> Array:
        return self.xp.clip(x, lo, hi)

    def where(self, cond: Array, a: Array, b: Array) -> Array:
        return self.xp.where(cond, a, b)

    def log2(self, x: Array) -> Array:
        return self.xp.log2(x)

    def log10(self, x: Array) -> Array:
        return self.xp.log10(x)

    def floor(self, x: Array) -> Array:
        return self.xp.floor(x)

    def ceil(self, x: Array) -> Array:
        return self.xp.ceil(x)

    def trunc(self, x: Array) -> Array:
        return self.xp.trunc(x)

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
