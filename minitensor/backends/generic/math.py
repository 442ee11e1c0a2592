"""Elementwise math: thin ``xp`` wrappers, each a place where a backend may put a fused kernel."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .activation import _ERFC_MID_P, _ERFC_MID_Q, _ERFC_TAIL_P, _ERFC_TAIL_Q, _INV_SQRT_PI, _horner, _rational

from . import xp_function

Array = Any

# erfinv's first guess: M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2010), single
# precision, in w = -log((1 - x)(1 + x)); coefficients highest power first.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)  # w < 5, in w - 2.5
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)  # w >= 5, in sqrt(w) - 3


# whole-number exponents that ``power`` computes by products (NumPy's pow is fast for 0, 1, 2, -1 and 0.5)
_CHAINED_POWERS = frozenset(range(-64, 65)) - {0, 1, 2, -1}


class ElementwiseOps:
    xp: Any
    erf: Callable[[Array], Array]  # the activation family's (Cody's float64 erf)

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
    tan = xp_function("tan")
    arcsin = xp_function("arcsin")
    arccos = xp_function("arccos")
    arctan = xp_function("arctan")
    sinh = xp_function("sinh")
    cosh = xp_function("cosh")
    arcsinh = xp_function("arcsinh")
    arccosh = xp_function("arccosh")
    arctanh = xp_function("arctanh")
    exp2 = xp_function("exp2")
    # broadcast: power(x, p), clip(x, lo, hi), where(cond, a, b); the others (a, b)
    maximum = xp_function("maximum")
    minimum = xp_function("minimum")
    clip = xp_function("clip")
    where = xp_function("where")
    arctan2 = xp_function("arctan2")
    hypot = xp_function("hypot")
    copysign = xp_function("copysign")
    remainder = xp_function("remainder")  # a - floor(a / b) * b: the sign of the divisor, as Python's %
    fmod = xp_function("fmod")  # a - trunc(a / b) * b: the sign of the dividend, as C's fmod
    logaddexp = xp_function("logaddexp")  # log(exp(a) + exp(b)) without overflow
    logaddexp2 = xp_function("logaddexp2")  # log2(2^a + 2^b) without overflow

    def power(self, x: Array, p: Any) -> Array:
        """x ** p, broadcasting. A floating x to a whole-number scalar p (|p| <= 64, not 0, 1, 2 or -1: those
        take NumPy's own fast paths) is a chain of squarings and products in float64, rounded once to x's
        dtype (its reciprocal for p < 0): libm's pow takes ~45 ns an element for a negative x (2,000 float32
        to the 3rd: 90 us, against 3 us here). For float16 / float32 the chain's errors (2^-53 each, times at
        most 64) leave the result correctly rounded but for near-ties; a float64 x takes the chain only for
        |p| <= 4 (within 3 ulps; x ** 3 and x ** -2 are PyTorch's own x * x * x and 1 / (x * x))."""
        if type(p) in (int, float) and p in _CHAINED_POWERS and x.dtype.kind == "f" and \
                (x.dtype.itemsize < 8 or -4 <= p <= 4):
            return self._power_by_products(x, int(p))
        return self.xp.power(x, p)

    def _power_by_products(self, x: Array, p: int) -> Array:
        base, n = x.astype(np.float64), abs(p)
        result: Any = None
        while n:  # exponentiation by squaring: |p| = sum of the powers of two whose squares are multiplied in
            if n & 1:
                result = base if result is None else result * base
            n >>= 1
            if n:
                base = base * base
        if p < 0:
            result = 1.0 / result
        return result.astype(x.dtype, copy=False)

    def round(self, x: Array, decimals: int) -> Array:
        """Half to even, as PyTorch; ``decimals`` places (negative: tens, hundreds...)."""
        return self.xp.round(x, decimals)

    def erfc(self, x: Array) -> Array:
        """1 - erf(x), computed in float64 with Cody's erfc ranges for x > 0.46875 (where 1 - erf(x) would
        cancel: erfc(5) = 1.5e-12), 1 - erf(x) below; other float dtypes round the float64 result."""
        xp = self.xp
        x64 = x.astype(xp.float64, copy=False)
        mid = xp.clip(x64, 0.46875, 4.0)
        out = xp.asarray(xp.exp(-mid * mid) * _rational(mid, _ERFC_MID_P, _ERFC_MID_Q))  # a 0-d x: still an array
        tail = x64 > 4.0
        if tail.any():
            t = x64[tail]
            z = 1 / (t * t)
            out[tail] = xp.exp(-t * t) / t * (_INV_SQRT_PI - z * _rational(z, _ERFC_TAIL_P, _ERFC_TAIL_Q))
        out = xp.where(x64 > 0.46875, out, 1 - self.erf(x64))
        return out.astype(x.dtype, copy=False)

    def erfinv(self, x: Array) -> Array:
        """The inverse of erf on [-1, 1] (+-inf at +-1, nan outside): Giles' single-precision guess, then two
        Newton steps on erf(y) = x in float64 (each squares the relative error: ~1e-16)."""
        xp = self.xp
        x64 = x.astype(xp.float64, copy=False)
        inside = xp.abs(x64) < 1
        xs = xp.where(inside, x64, 0.0)  # the guess and the steps only where they are finite
        w = -xp.log((1 - xs) * (1 + xs))
        y = xs * xp.where(w < 5, _horner(w - 2.5, _ERFINV_CENTRAL), _horner(xp.sqrt(w) - 3, _ERFINV_TAIL))
        for _ in range(2):
            y = y - (self.erf(y) - xs) / (2 * _INV_SQRT_PI * xp.exp(-y * y))
        edge = xp.where(xp.abs(x64) == 1, xp.copysign(math.inf, x64), math.nan)
        return xp.where(inside, y, edge).astype(x.dtype, copy=False)

    def nan_to_num(self, x: Array, nan: float, posinf: float, neginf: float) -> Array:
        """x with nan, +inf and -inf replaced by the three numbers (rounded to x's dtype, where a number past
        its range becomes inf, as PyTorch)."""
        if x.dtype.kind == "V":  # ml_dtypes' bfloat16 is no NumPy inexact type: nan_to_num would skip it
            return self.nan_to_num(x.astype(self.xp.float32), nan, posinf, neginf).astype(x.dtype)
        with np.errstate(over="ignore"):
            return self.xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def expand_dims(self, x: Array, axes: tuple[int, ...]) -> Array:
        """x with new length-1 axes at ``axes`` (positions in the result): a view."""
        return self.xp.expand_dims(x, axes)

    def squeeze(self, x: Array, axes: tuple[int, ...] | int) -> Array:
        """x without the length-1 axes ``axes``: a view."""
        return self.xp.squeeze(x, axis=axes)
