"""Activations, each a forward and a backward that takes the minimum saved state.

A backward takes the output ``y`` where the derivative is a function of it (relu, sigmoid, tanh, elu,
leaky_relu, hardtanh, softmax, log_softmax) and the input ``x`` otherwise (gelu, silu, softplus, celu, selu,
mish, hardsigmoid, hardswish, logsigmoid, softsign).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

Array = Any

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_GELU_CUBIC = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

# erf in float64: W. J. Cody's rational approximations (Math. Comp. 23, 1969; netlib SPECFUN CALERF),
# coefficients highest power first. erf(x) = x P(x^2) / Q(x^2) for |x| <= 0.46875:
_ERF_P = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
          3.77485237685302021e02, 3.20937758913846947e03)
_ERF_Q = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
# erfc(y) = exp(-y^2) P(y) / Q(y) for 0.46875 < y <= 4:
_ERFC_MID_P = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
               6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
               1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERFC_MID_Q = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
               1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
               3.43936767414372164e03, 1.23033935480374942e03)
# erfc(y) = exp(-y^2) / y (1/sqrt(pi) - z P(z) / Q(z)), z = 1/y^2, for y > 4:
_ERFC_TAIL_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
                1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFC_TAIL_Q = (1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
                6.05183413124413191e-2, 2.33520497626869185e-3)
# erf in float32: one rational x P(x^2) / Q(x^2) on |x| < 3.8325 (within 3 ulp; erf rounds to +-1 beyond),
# from Eigen's generic_fast_erf_float: a third of the work of Cody's three ranges, no branches.
_ERF32_CLAMP = 3.832506856900711
_ERF32_P = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
            1.128379143519084)
_ERF32_Q = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
            0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)


def _horner(z: Array, coefficients: tuple[float, ...]) -> Array:
    """c[0] z^n + c[1] z^(n-1) + ... + c[n], in z's dtype (Python floats stay weak scalars)."""
    acc = z * coefficients[0] + coefficients[1]
    for c in coefficients[2:]:
        acc *= z
        acc += c
    return acc


def _rational(z: Array, p: tuple[float, ...], q: tuple[float, ...]) -> Array:
    return _horner(z, p) / _horner(z, q)


class ActivationOps:
    xp: Any

    def relu(self, x: Array) -> Array:
        return self.xp.maximum(x, 0)

    def relu_backward(self, gy: Array, y: Array) -> Array:
        """dx = 0 where y <= 0, else gy; saving y, not x. A where, not gy * (y > 0): PyTorch's threshold_backward
        gives 0 for a NaN or infinite gy where y <= 0, and gy where y is NaN (the test is y <= 0, not y > 0)."""
        return self.xp.where(y <= 0, 0, gy)

    def sigmoid(self, x: Array) -> Array:
        """1 / (1 + exp(-x)), written through tanh so it cannot overflow: (1 + tanh(x/2)) / 2."""
        xp = self.xp
        y = xp.tanh(x * 0.5)
        y += 1
        y *= 0.5
        return y

    def sigmoid_backward(self, gy: Array, y: Array) -> Array:
        return gy * y * (1 - y)

    def tanh(self, x: Array) -> Array:
        return self.xp.tanh(x)

    def tanh_backward(self, gy: Array, y: Array) -> Array:
        return gy * (1 - y * y)

    def leaky_relu(self, x: Array, negative_slope: float) -> Array:
        """x where x > 0, negative_slope * x elsewhere: max(x, s x) for a slope 0 < s <= 1, min(x, s x) for
        s > 1 (two passes; NumPy's ``where`` is several times slower than both)."""
        xp = self.xp
        if 0 < negative_slope <= 1:
            return xp.maximum(x, x * negative_slope)
        if negative_slope > 1:
            return xp.minimum(x, x * negative_slope)
        return xp.where(x > 0, x, x * negative_slope)  # s <= 0: inf * 0 would make max/min wrong at inf

    def leaky_relu_backward(self, gy: Array, y_or_x: Array, negative_slope: float) -> Array:
        """gy where the input was > 0, negative_slope * gy elsewhere (at 0 too, as PyTorch); for a slope in
        [0, 1] as gy (s + (1 - s) [v > 0]), without ``where`` (see leaky_relu): with s and 1 - s rounded in
        gy's dtype, (1 - s) + s rounds to exactly 1 there, so the result is gy itself where v > 0.

        ``y`` has the input's sign when negative_slope > 0, so callers save y then and x otherwise."""
        if not 0 <= negative_slope <= 1:
            return self.xp.where(y_or_x > 0, gy, gy * negative_slope)
        s = gy.dtype.type(negative_slope)
        gx = (y_or_x > 0).astype(gy.dtype)
        gx *= 1 - s
        gx += s
        gx *= gy
        return gx

    def elu(self, x: Array, alpha: float) -> Array:
        """x where x > 0, alpha * (exp(x) - 1) elsewhere."""
        xp = self.xp
        return xp.where(x > 0, x, xp.expm1(xp.where(x > 0, 0, x)) * alpha)  # a where keeps -0's sign (PyTorch)

    def elu_backward(self, gy: Array, y_or_x: Array, alpha: float, is_result: bool) -> Array:
        """dy/dx = 1 where x > 0 and alpha exp(x) elsewhere, which is y + alpha: from the output y
        (``is_result``; it has x's sign when alpha >= 0) or from the input x."""
        xp = self.xp
        below = y_or_x + alpha if is_result else xp.exp(xp.minimum(y_or_x, 0)) * alpha
        below *= gy
        return xp.where(y_or_x <= 0, below, gy)  # gy at NaN, as PyTorch

    def hardtanh(self, x: Array, min_val: float, max_val: float) -> Array:
        return self.xp.clip(x, min_val, max_val)

    def hardtanh_backward(self, gy: Array, y: Array, min_val: float, max_val: float) -> Array:
        """gy strictly inside (min_val, max_val), 0 at and beyond the ends (PyTorch's convention); gy at NaN."""
        return self.xp.where((y <= min_val) | (y >= max_val), 0, gy)  # a NaN gy outside gives 0, as PyTorch

    def erf(self, x: Array) -> Array:
        """The error function, vectorised: Cody's approximations in float64 (relative error ~1e-16),
        a single rational in float32 (3 ulp); other float dtypes go through float32. A 0-d x goes as one
        element: NumPy's arithmetic on 0-d arrays returns scalars, which the in-place steps cannot write."""
        if x.ndim == 0:
            return self.erf(x.reshape(1)).reshape(())
        if x.dtype == self.xp.float64:
            return self._erf_float64(x)
        x32 = x.astype(self.xp.float32, copy=False)
        return self._erf_float32(x32).astype(x.dtype, copy=False)

    def _erf_float32(self, x: Array) -> Array:
        xp = self.xp
        xc = xp.clip(x, -_ERF32_CLAMP, _ERF32_CLAMP)
        x2 = xc * xc
        y = _horner(x2, _ERF32_P)
        y *= xc
        y /= _horner(x2, _ERF32_Q)
        return xp.clip(y, -1.0, 1.0, out=y)  # the rational passes 1 by an ulp near the clamp

    def _erf_float64(self, x: Array) -> Array:
        """Both main ranges over the whole array (their arguments clipped into range) and a select:
        cheaper than gathering each range's elements. |x| > 4 is rare and computed where it occurs."""
        xp = self.xp
        a = xp.abs(x)
        near = a <= 0.46875
        x_near = xp.clip(x, -0.46875, 0.46875)
        erf_near = _rational(x_near * x_near, _ERF_P, _ERF_Q)
        erf_near *= x_near
        a_mid = xp.clip(a, 0.46875, 4.0)
        erfc = xp.exp(-a_mid * a_mid)
        erfc *= _rational(a_mid, _ERFC_MID_P, _ERFC_MID_Q)
        tail = ~(a <= 4.0)  # also takes nan, which gives nan
        if tail.any():
            at = a[tail]
            z = 1 / (at * at)
            erfc[tail] = xp.exp(-at * at) / at * (_INV_SQRT_PI - z * _rational(z, _ERFC_TAIL_P, _ERFC_TAIL_Q))
        erf_far = xp.copysign(1 - erfc, x)
        return xp.where(near, erf_near, erf_far)

    def gelu(self, x: Array, approximate: str) -> Array:
        """x Phi(x) with Phi the normal CDF: 0.5 x (1 + erf(x / sqrt 2)) for approximate='none',
        0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) for approximate='tanh'."""
        if approximate == "tanh":
            cdf = self.xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        else:
            cdf = self.erf(x * _INV_SQRT_2)
        cdf += 1
        cdf *= x
        cdf *= 0.5
        return cdf

    def gelu_backward(self, gy: Array, x: Array, approximate: str) -> Array:
        """d/dx [x Phi(x)] = Phi(x) + x phi(x) (or the derivative of the tanh form)."""
        xp = self.xp
        if approximate == "tanh":
            x2 = x * x
            t = xp.tanh(_SQRT_2_OVER_PI * x * (1 + _GELU_CUBIC * x2))
            dt = (1 - t * t) * (_SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * x2))
            return gy * (0.5 * (1 + t) + 0.5 * x * dt)
        cdf = 0.5 * (1 + self.erf(x * _INV_SQRT_2))
        pdf = xp.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return gy * (cdf + x * pdf)

    def silu(self, x: Array) -> Array:
        """x * sigmoid(x)."""
        return x * self.sigmoid(x)

    def silu_backward(self, gy: Array, x: Array) -> Array:
        """d/dx [x s(x)] = s (1 + x (1 - s)); s recomputed from x rather than saved."""
        s = self.sigmoid(x)
        return gy * s * (1 + x * (1 - s))

    def softplus(self, x: Array, beta: float, threshold: float) -> Array:
        """log(1 + exp(beta x)) / beta, or x where beta x > threshold (PyTorch's linear switch).

        Written as max(bx, 0) + log1p(exp(-|bx|)) so that no exp overflows, whatever the threshold."""
        xp = self.xp
        bx = x * beta
        soft = xp.log1p(xp.exp(-xp.abs(bx)))
        soft += xp.maximum(bx, 0)
        if beta != 1:
            soft /= beta
        return xp.where(bx > threshold, x, soft)

    def softplus_backward(self, gy: Array, x: Array, beta: float, threshold: float) -> Array:
        """sigmoid(beta x), or 1 on the linear part."""
        bx = x * beta
        return gy * self.xp.where(bx > threshold, 1, self.sigmoid(bx))

    def softmax(self, x: Array, axis: int) -> Array:
        """exp(x - max) / sum(exp(x - max)) along ``axis``."""
        xp = self.xp
        if x.size == 0:  # nothing to normalise (an empty axis has no max): empty, as PyTorch
            return xp.empty_like(x)
        y = x - x.max(axis=axis, keepdims=True)
        xp.exp(y, out=y)
        y /= y.sum(axis=axis, keepdims=True)
        return y

    def softmax_backward(self, gy: Array, y: Array, axis: int) -> Array:
        """y * (gy - sum(gy * y)) along ``axis``."""
        gx = gy * y
        gx -= y * gx.sum(axis=axis, keepdims=True)
        return gx

    def log_softmax(self, x: Array, axis: int) -> Array:
        """x - logsumexp(x) along ``axis`` (max subtracted first, so nothing overflows)."""
        xp = self.xp
        if x.size == 0:
            return xp.empty_like(x)
        y = x - x.max(axis=axis, keepdims=True)
        y -= xp.log(xp.exp(y).sum(axis=axis, keepdims=True))
        return y

    def log_softmax_backward(self, gy: Array, y: Array, axis: int) -> Array:
        """gy - exp(y) * sum(gy) along ``axis``."""
        return gy - self.xp.exp(y) * gy.sum(axis=axis, keepdims=True)

    # ------------------------------------------------ the smaller activations; each backward takes x
    def celu(self, x: Array, alpha: float) -> Array:
        """x where x > 0, alpha (exp(x / alpha) - 1) elsewhere (alpha != 0)."""
        xp = self.xp
        return xp.where(x > 0, x, xp.expm1(xp.where(x > 0, 0, x) / alpha) * alpha)  # -0 stays -0

    def celu_backward(self, gy: Array, x: Array, alpha: float) -> Array:
        """gy where x > 0 or NaN (PyTorch), gy exp(x / alpha) elsewhere."""
        xp = self.xp
        return xp.where(x <= 0, gy * xp.exp(xp.minimum(x, 0) / alpha), gy)

    def selu(self, x: Array) -> Array:
        """scale * elu(x, alpha) with SELU's constants (Klambauer et al., 2017)."""
        y = self.elu(x, _SELU_ALPHA)
        y *= _SELU_SCALE
        return y

    def selu_backward(self, gy: Array, x: Array) -> Array:
        return self.elu_backward(gy * _SELU_SCALE, x, _SELU_ALPHA, is_result=False)

    def mish(self, x: Array) -> Array:
        """x tanh(softplus(x))."""
        return x * self.xp.tanh(self.softplus(x, 1.0, 20.0))

    def mish_backward(self, gy: Array, x: Array) -> Array:
        """t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x))."""
        t = self.xp.tanh(self.softplus(x, 1.0, 20.0))
        return gy * (t + x * self.sigmoid(x) * (1 - t * t))

    def hardsigmoid(self, x: Array) -> Array:
        """min(max(x + 3, 0), 6) / 6."""
        y = self.xp.clip(x + 3, 0, 6)
        y /= 6
        return y

    def hardsigmoid_backward(self, gy: Array, x: Array) -> Array:
        """gy / 6 strictly inside (-3, 3), 0 elsewhere (PyTorch's convention at the ends)."""
        return self.xp.where((x > -3) & (x < 3), gy / 6, 0)  # a NaN gy outside gives 0, as PyTorch

    def hardswish(self, x: Array) -> Array:
        """x min(max(x + 3, 0), 6) / 6."""
        return x * self.hardsigmoid(x)

    def hardswish_backward(self, gy: Array, x: Array) -> Array:
        """0 up to -3, x / 3 + 1/2 strictly inside (-3, 3), 1 from 3 on (PyTorch's choices at the ends)."""
        xp = self.xp
        return xp.where(x <= -3, 0, xp.where(x < 3, gy * (x / 3 + 0.5), gy))

    def logsigmoid(self, x: Array) -> Array:
        """log(1 / (1 + exp(-x))) = min(x, 0) - log1p(exp(-|x|)), finite for every finite x."""
        xp = self.xp
        return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))

    def logsigmoid_backward(self, gy: Array, x: Array) -> Array:
        """gy sigmoid(-x)."""
        return gy * self.sigmoid(-x)

    def softsign(self, x: Array) -> Array:
        """x / (1 + |x|)."""
        return x / (1 + self.xp.abs(x))

    def softsign_backward(self, gy: Array, x: Array) -> Array:
        """gy / (1 + |x|)^2, summed as PyTorch's x / (|x| + 1) differentiates it: gy / d - gy x sign(x) / d^2
        (NaN at +-inf, inf / inf)."""
        xp = self.xp
        d = 1 + xp.abs(x)
        with np.errstate(invalid="ignore"):
            return gy / d + (-gy * x / (d * d)) * xp.sign(x)
