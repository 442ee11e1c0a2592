"""Special functions (PyTorch's ``torch.special`` family): log-gamma and its derivatives, the modified Bessel
functions I0 and I1 (and their scaled forms), the other Bessel functions (``bessel``), the Hurwitz zeta function,
erfcx, log_ndtr, sinc, x log y, x log1p y, and the gradient of gamma draws (``standard_gamma_grad``). The gamma and
Bessel functions, erfcx and log_ndtr come from SciPy's ``scipy.special`` on the CPU and ``cupyx.scipy.special``
on CUDA (the ``_special_module`` hook); sinc, xlogy and xlog1py are written on ``xp``. 16-bit floats are
computed in float32 and rounded back, as PyTorch's kernels compute them; the other dtypes keep their own
(SciPy's float32 loops evaluate in float64 and round)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

Array = Any


class SpecialOps:
    xp: Any

    def _special_module(self) -> Any:
        """The module with SciPy's special functions for this backend's arrays."""
        import scipy.special
        return scipy.special

    def _wide(self, x: Array) -> Array:
        """x in a dtype the special functions have loops for: 16-bit floats as float32."""
        return x.astype(self.xp.float32) if x.dtype.itemsize < 4 else x

    def lgamma(self, x: Array) -> Array:
        """log |Gamma(x)|: inf at the poles (0, -1, -2...) and at +-inf (C's lgamma, as PyTorch; SciPy's
        gammaln gives -inf at -inf)."""
        y = self._special_module().gammaln(self._wide(x))
        # SciPy's gammaln overflows to inf at subnormal x; there lgamma(x) = -log|x| - euler_gamma x + O(x^2)
        ax = self.xp.abs(x)
        with np.errstate(divide="ignore"):
            y = self.xp.where((ax > 0) & (ax < np.finfo(np.float64).tiny), -self.xp.log(ax), y)
        return self.xp.where(x == -math.inf, math.inf, y).astype(x.dtype, copy=False)

    def digamma(self, x: Array) -> Array:
        """d/dx log Gamma(x): -inf at +0, +inf at -0, nan at the negative integers."""
        return self._special_module().psi(self._wide(x)).astype(x.dtype, copy=False)

    def polygamma(self, n: int, x: Array) -> Array:
        """The n-th derivative of digamma, (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (Hurwitz zeta; SciPy's
        and CuPy's own polygamma are this formula)."""
        if n == 0:
            return self.digamma(x)
        factor = (-1.0) ** (n + 1) * (float(math.factorial(n)) if n <= 170 else math.inf)
        with np.errstate(over="ignore", invalid="ignore"):
            y = factor * self._special_module().zeta(n + 1.0, self._wide(x))
        # PyTorch's at the infinities: its trigamma is NaN at -inf, its zeta-based n >= 2 NaN at +inf
        y = self.xp.where(x == (-math.inf if n == 1 else math.inf), math.nan, y)
        return y.astype(x.dtype, copy=False)

    def _scipy(self, name: str, x: Array) -> Array:
        """SciPy's (CuPy's) ``special.<name>`` of x, in x's dtype."""
        return getattr(self._special_module(), name)(self._wide(x)).astype(x.dtype, copy=False)

    def i0(self, x: Array) -> Array:
        """The modified Bessel function of the first kind, order 0 (nan at +-inf, as PyTorch's and SciPy's)."""
        return self._scipy("i0", x)

    def i1(self, x: Array) -> Array:
        """The modified Bessel function of the first kind, order 1 (i0's derivative)."""
        return self._scipy("i1", x)

    def i0e(self, x: Array) -> Array:
        """exp(-|x|) i0(x), which does not overflow."""
        return self._scipy("i0e", x)

    def i1e(self, x: Array) -> Array:
        """exp(-|x|) i1(x)."""
        return self._scipy("i1e", x)

    def bessel(self, kind: str, x: Array) -> Array:
        """The Bessel function ``kind`` of x, in x's dtype: "j0", "j1", "y0", "y1" (first and second kind),
        "k0", "k1" (modified, second kind) or "k0e", "k1e" (exp(x) k0, exp(x) k1, which do not underflow).
        SciPy's Cephes approximations, accurate to about 1e-15 relative in float64."""
        if kind not in ("j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e"):
            raise ValueError(f"unknown Bessel function {kind!r}")
        return self._scipy(kind, x)

    def zeta(self, x: Array, q: Array) -> Array:
        """The Hurwitz zeta function sum_{k>=0} (k + q)^-x (x > 1), in x's dtype: inf at x = 1 and at the poles
        q = 0, -1, -2...; nan for x < 1, and at q = inf for x != 1 (PyTorch's value there; the limit is 0)."""
        y = self._special_module().zeta(self._wide(x), self._wide(q))
        return self.xp.where((q == math.inf) & (x != 1), math.nan, y).astype(x.dtype, copy=False)

    def erfcx(self, x: Array) -> Array:
        """exp(x^2) erfc(x), the scaled complementary error function."""
        return self._scipy("erfcx", x)

    def log_ndtr(self, x: Array) -> Array:
        """log of the standard normal CDF, accurate far into the left tail."""
        return self._scipy("log_ndtr", x)

    def gammainc(self, a: Array, x: Array) -> Array:
        """The regularized lower incomplete gamma function P(a, x) (``torch.igamma``), in a's dtype."""
        return self._incomplete_gamma(a, x, upper=False)

    def gammaincc(self, a: Array, x: Array) -> Array:
        """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (``torch.igammac``)."""
        return self._incomplete_gamma(a, x, upper=True)

    def _incomplete_gamma(self, a: Array, x: Array, upper: bool) -> Array:
        """SciPy's P or Q with PyTorch's edge cases (calc_igamma's order): nan for a < 0 or x < 0, a = 0 with
        x <= 0, and a, x both infinite; then P = 1 at a = 0, 0 at x = 0, 0 at a = inf, 1 at x = inf."""
        xp = self.xp
        f = self._special_module().gammaincc if upper else self._special_module().gammainc
        y = f(self._wide(a), self._wide(x))
        one, zero = (0.0, 1.0) if upper else (1.0, 0.0)  # the values of P, as Q = 1 - P
        y = xp.where(xp.isinf(x), one, y)
        y = xp.where(xp.isinf(a), zero, y)
        y = xp.where(x == 0, zero, y)
        y = xp.where(a == 0, one, y)
        bad = (x < 0) | (a < 0) | ((a == 0) & ~(x > 0)) | (xp.isinf(a) & xp.isinf(x))
        return xp.where(bad, math.nan, y).astype(a.dtype, copy=False)

    def standard_gamma_grad(self, alpha: Array, x: Array) -> Array:
        """dx/dalpha of a Gamma(alpha, 1) draw x at fixed uniform level (implicit reparameterisation,
        Figurnov et al. 2018): -(d/dalpha P(alpha, x)) / p(x; alpha), P the CDF and p the density.

        d/dalpha P by the five-point stencil with step h = min(alpha, sqrt(alpha)) / 1000: P changes on the scale
        of alpha for small alpha and of the standard deviation sqrt(alpha) for large, so the truncation
        (~ (h / scale)^4) and the rounding (~ eps scale / h) both stay near 1e-12 relative. The stencil runs on
        P below the median and on -Q = P - 1 above it, where Q keeps its relative accuracy in the upper tail.
        Computed in float64."""
        xp, sp = self.xp, self._special_module()
        a, v = alpha.astype(np.float64), x.astype(np.float64)
        h = xp.minimum(a, xp.sqrt(a)) * 1e-3
        upper = sp.gammainc(a, v) > 0.5
        cdf = lambda b: xp.where(upper, -sp.gammaincc(b, v), sp.gammainc(b, v))  # noqa: E731
        dcdf = (cdf(a - 2 * h) - 8 * cdf(a - h) + 8 * cdf(a + h) - cdf(a + 2 * h)) / (12 * h)
        with np.errstate(divide="ignore", over="ignore"):
            log_pdf = (a - 1) * xp.log(v) - v - sp.gammaln(a)
            grad = -dcdf * xp.exp(-log_pdf)
        return xp.where(xp.isfinite(grad), grad, 0.0).astype(alpha.dtype, copy=False)

    def sinc(self, x: Array) -> Array:
        """sin(pi x) / (pi x), 1 at 0, nan at +-inf."""
        with np.errstate(invalid="ignore"):
            return self.xp.sinc(self._wide(x)).astype(x.dtype, copy=False)

    def xlogy(self, x: Array, y: Array) -> Array:
        """x log(y), 0 where x = 0 unless y is nan; either operand may be a Python number (then in the
        other's dtype)."""
        return self._x_log(x, y, self.xp.log)

    def xlog1py(self, x: Array, y: Array) -> Array:
        """x log(1 + y), 0 where x = 0 unless y is nan; as xlogy."""
        return self._x_log(x, y, self.xp.log1p)

    def _x_log(self, x: Array, y: Array, log: Any) -> Array:
        xp = self.xp
        dtype = (x if hasattr(x, "dtype") else y).dtype
        a, b = xp.asarray(x, dtype), xp.asarray(y, dtype)
        wa, wb = self._wide(a), self._wide(b)
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf and 0 * -inf are meant
            out = xp.where((wa == 0) & ~xp.isnan(wb), 0, wa * log(wb))
        return out.astype(dtype, copy=False)
