"""PyTorch's special functions: ``lgamma``, ``digamma``, ``polygamma``, ``i0``, ``sinc``, ``xlogy`` and
``logit`` (also ``minitensor.<name>``), with the gradients of PyTorch's derivatives.yaml (corner values
included; integer inputs give the default float dtype), and those that PyTorch has under ``torch.special``
only: ``entr``, ``ndtr`` and ``ndtri`` (``minitensor/special.py`` is the public namespace).

entr(x) = -x log x (0 at 0, -inf for x < 0); d/dx = -(1 + log x).
ndtr(x) = P(N(0, 1) <= x) = erfc(-x / sqrt 2) / 2 (erfc keeps the lower tail's digits that 1 + erf loses).
ndtri(p) = ndtr^-1(p); d/dp = sqrt(2 pi) exp(y^2 / 2).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ._util import NoGrad, promote, to_float
from .math import _op, _unary, erfc
from ..backends.base import Backend

__all__ = ["lgamma", "digamma", "polygamma", "i0", "sinc", "xlogy", "logit"]  # entr, ndtr, ndtri: torch.special only

Lgamma = _op("Lgamma", lambda B, x: B.lgamma(x), lambda B, g, x: g * B.digamma(x))
Digamma = _op("Digamma", lambda B, x: B.digamma(x), lambda B, g, x: g * B.polygamma(1, x))
I0 = _op("I0", lambda B, x: B.i0(x), lambda B, g, x: g * B.i1(x))
_SQRT_PI_2 = 2 / math.sqrt(math.pi)


def _at_zero(B: Backend, x: Any, value: float, elsewhere: Callable[[Any], Any]) -> Any:
    """``elsewhere(x)`` (which divides by x), ``value`` near x = 0: PyTorch's limit there. Near means 0 or
    |x| < 1e-30: the limit is exact there (i1'(x) = 1/2 + 3 x^2 / 16...), and below it i1(x) of a subnormal x
    underflows (i1(x) / x = 0) and float32's 1 / x overflows. 1e-30 rounds to 0 in float16 (NEP 50), hence
    the explicit x == 0."""
    near = (x == 0) | (B.abs(x) < 1e-30)
    with np.errstate(divide="ignore", invalid="ignore"):
        return B.where(near, value, elsewhere(B.where(near, 1, x)))


# PyTorch's derivatives: i1' = i0 - i1 / x (1/2 at 0), i0e' = i1e - sgn(x) i0e, i1e' = i0e - i1e (sgn x + 1 / x)
# (1/2 at 0), erfcx' = 2 x erfcx - 2 / sqrt(pi), log_ndtr' = exp(-(y + x^2 / 2)) / sqrt(2 pi).
I1 = _op("I1", lambda B, x: B.i1(x), lambda B, g, x: g * _at_zero(B, x, 0.5, lambda v: B.i0(v) - B.i1(v) / v))
I0e = _op("I0e", lambda B, x: B.i0e(x), lambda B, g, x: g * (B.i1e(x) - B.sign(x) * B.i0e(x)))
I1e = _op("I1e", lambda B, x: B.i1e(x),
          lambda B, g, x: g * _at_zero(B, x, 0.5, lambda v: B.i0e(v) - B.i1e(v) * (B.sign(v) + 1 / v)))
Erfcx = _op("Erfcx", lambda B, x: B.erfcx(x), lambda B, g, x: g * (2 * x * B.erfcx(x) - _SQRT_PI_2))


def _sinc_grad(B: Backend, g: Any, x: Any) -> Any:
    """g (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where pi x^2 is 0 (PyTorch's sinc_backward)."""
    px, pxx = x * math.pi, x * x * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        out = g * (px * B.cos(px) - B.sin(px)) / pxx
    return B.where(pxx == 0, 0, out)


Sinc = _op("Sinc", lambda B, x: B.sinc(x), _sinc_grad)
lgamma, digamma, i0, sinc, i1, i0e, i1e, erfcx = map(_unary, (Lgamma, Digamma, I0, Sinc, I1, I0e, I1e, Erfcx))


class Polygamma(ArrayFunction):
    """The n-th derivative of digamma; its gradient is polygamma(n + 1, x)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, n: int) -> Any:
        ctx.n = n
        ctx.save_for_backward(x)
        return B.polygamma(n, x)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_arrays
        return gy * B.polygamma(ctx.n + 1, x), None


def polygamma(n: int, input: Tensor) -> Tensor:
    """psi^(n)(input), the n-th derivative of digamma (n = 0: digamma itself)."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if not isinstance(input, Tensor):
        raise TypeError(f"polygamma(): argument 'input' (position 2) must be Tensor, not {type(input).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Polygamma.apply(to_float(input), int(n))


class Xlogy(ArrayFunction):
    """x log(y), 0 at x = 0 (y not nan). dx = xlogy(g, y), taken as 0 where x = 0 and y <= 0 (the derivative
    along x = 0, PyTorch's choice); dy = g x / y (nan at x = y = 0, as PyTorch)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        y = B.xlogy(a, b)
        ctx.save_for_backward(a, b)  # not y: each gradient reads both inputs
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        low = b <= 0 if hasattr(b, "shape") else not b > 0  # a Python y: PyTorch tests "not y > 0" (nan too)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (B.where((a == 0) & low, 0, B.xlogy(gy, b)) if ctx.needs_input_grad[0] else None,
                    gy * a / b if ctx.needs_input_grad[1] else None)


class Xlog1py(ArrayFunction):
    """x log(1 + y), 0 at x = 0 (y not nan). PyTorch's gradients: dx = g xlog1py(x != 0, y), dy = g x / (1 + y)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return B.xlog1py(a, b)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        a, b = ctx.saved_arrays
        nonzero = (a != 0).astype(gy.dtype) if hasattr(a, "shape") else float(a != 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (gy * B.xlog1py(nonzero, b) if ctx.needs_input_grad[0] else None,
                    gy * a / (b + 1) if ctx.needs_input_grad[1] else None)


def xlog1py(input: Any, other: Any) -> Tensor:
    """input * log1p(other), 0 where input is 0 (unless other is nan); either may be a Python number."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"xlog1py() expects a Tensor argument, got ({type(input).__name__}, "
                        f"{type(other).__name__})")
    a, b = promote(input, other, floating=True)
    return Xlog1py.apply(a, b)


def xlogy(input: Any, other: Any) -> Tensor:
    """input * log(other), 0 where input is 0 (unless other is nan); either may be a Python number."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"xlogy() expects a Tensor argument, got ({type(input).__name__}, "
                        f"{type(other).__name__})")
    a, b = promote(input, other, floating=True)
    return Xlogy.apply(a, b)


class Logit(ArrayFunction):
    """log(z / (1 - z)) with z = x clamped to [eps, 1 - eps] when eps is given. dx = g / (x (1 - x)), 0
    outside [eps, 1 - eps] with eps, nan outside [0, 1] without (PyTorch's logit_backward)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, eps: float | None) -> Any:
        ctx.save_for_backward(x)
        # the bounds in x's dtype, as PyTorch's (NumPy would widen a 16-bit x by a Python float)
        ctx.bounds = None if eps is None else (x.dtype.type(eps), x.dtype.type(1) - x.dtype.type(eps))
        if eps is not None:  # PyTorch's x < lo ? lo : x > hi ? hi : x (lo wins where eps > 0.5)
            lo, hi = ctx.bounds
            x = B.where(x < lo, lo, B.where(x > hi, hi, x))
        with np.errstate(divide="ignore", invalid="ignore"):
            return B.log(x / (1 - x))

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, = ctx.saved_arrays
        (lo, hi), outside = ((0, 1), math.nan) if ctx.bounds is None else (ctx.bounds, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = gy / (x * (1 - x))
            if ctx.bounds is None:  # PyTorch: dy * inf at x = 0 or 1 (so -0 gives +inf, not 1 / -0)
                g = B.where((x == 0) | (x == 1), gy * math.inf, g)
        return B.where((x < lo) | (x > hi), outside, g), None


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), the inverse of sigmoid; ``eps`` clamps p to [eps, 1 - eps] first (a negative eps
    is no clamp, as PyTorch)."""
    return Logit.apply(to_float(input), None if eps is None or eps < 0 else float(eps))


_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LOG_2PI = math.log(2.0 * math.pi)


def _entr(B: Backend, x: Any) -> Any:
    pos = x > 0
    inside = -x * B.log(B.where(pos, x, 1))  # log only where it is finite
    return B.where(pos, inside, B.where(x < 0, -math.inf, B.where(x == 0, 0, x)))  # x: nan stays nan


def _entr_grad(B: Backend, g: Any, x: Any) -> Any:
    pos = x > 0
    return g * B.where(pos, -(1 + B.log(B.where(pos, x, 1))), B.where(x == 0, math.inf, math.nan))


def _ndtri(B: Backend, p: Any) -> Any:
    """In float64 on q = min(p, 1 - p) (exact for p in [0.5, 1]), negated for p > 1/2: a start from erfinv
    (or, where 2q - 1 has lost q's digits, the tail's asymptote: with t = -2 log q, y ~ -sqrt(t - log t -
    log 2 pi)), then Newton steps on
    log ndtr(y) = log q, whose relative accuracy holds down to the smallest q."""
    p64 = p.astype(np.float64)
    q = B.minimum(p64, 1 - p64)
    ok = (q > 0) & (q <= 0.5)
    qs = B.where(ok, q, 0.25)
    t = -2 * B.log(B.minimum(qs, 1e-10))  # >= 46: the asymptote is used only there
    y = B.where(qs > 1e-10, _SQRT2 * B.erfinv(2 * qs - 1), -B.sqrt(t - B.log(t) - _LOG_2PI))
    for _ in range(3):
        cdf = 0.5 * B.erfc(-y / _SQRT2)
        y = y - (B.log(cdf) - B.log(qs)) * cdf * _SQRT_2PI * B.exp(y * y / 2)
    edge = B.where(q == 0, -math.inf, math.nan)  # p = 0 or 1: -inf (+inf below); outside [0, 1] or nan: nan
    y = B.where(ok, y, edge)
    return B.where(p64 > 0.5, -y, y).astype(p.dtype)


Entr = _op("Entr", _entr, _entr_grad)
Ndtri = _op("Ndtri", _ndtri, lambda B, g, y: g * _SQRT_2PI * B.exp(y * y / 2), save_output=True)

LogNdtr = _op("LogNdtr", lambda B, x: B.log_ndtr(x),
              lambda B, g, x: g * B.exp(-(B.log_ndtr(x) + x * x / 2)) / _SQRT_2PI)

entr = _unary(Entr)
ndtri = _unary(Ndtri)
log_ndtr = _unary(LogNdtr)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF: erfc(-x / sqrt 2) / 2."""
    return erfc(input * (-1 / _SQRT2)) * 0.5


class Igamma(ArrayFunction):
    """P(a, x), the regularized lower incomplete gamma function (``upper``: Q(a, x) = 1 - P(a, x)). The
    gradient is along x only, +-exp((a - 1) log x - x - lgamma(a)); along a PyTorch has none and raises."""
    upper = False

    @staticmethod
    def forward(ctx: Any, B: Backend, a: Any, x: Any) -> Any:
        ctx.save_for_backward(a, x)
        return B.gammaincc(a, x) if ctx.upper else B.gammainc(a, x)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        if ctx.needs_input_grad[0]:
            raise RuntimeError(f"the derivative for '{type(ctx).__name__.lower()}: input' is not implemented.")
        a, x = ctx.saved_arrays
        with np.errstate(divide="ignore", invalid="ignore"):
            d = gy * B.exp((a - 1) * B.log(x) - x - B.lgamma(a))
        return None, -d if ctx.upper else d


class Igammac(Igamma):
    upper = True


def igamma(input: Tensor, other: Tensor) -> Tensor:
    """P(input, other) = gamma(a, x) / Gamma(a), the regularized lower incomplete gamma function."""
    return Igamma.apply(*promote(input, other, floating=True))


def igammac(input: Tensor, other: Tensor) -> Tensor:
    """Q(input, other) = 1 - P(input, other), the regularized upper incomplete gamma function."""
    return Igammac.apply(*promote(input, other, floating=True))


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma, sum_{i<p} lgamma(x - i/2) + p (p - 1) / 4 log(pi) (p >= 1)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    from ..creation import arange
    x = to_float(input)
    offsets = arange(p, dtype=x.dtype, device=x.device) * -0.5
    return lgamma(x.unsqueeze(-1) + offsets).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


__all__ += ["igamma", "igammac", "mvlgamma"]


# ----------------------------------------------------------------------- Bessel functions and zeta
# torch.special's Bessel functions have no derivative: their results do not require grad (NoGrad), as
# PyTorch's, whose outputs have no grad_fn.
def _bessel(kind: str, name: str) -> Callable[[Tensor], Tensor]:
    def op(input: Tensor) -> Tensor:
        return NoGrad.apply(to_float(input), op=lambda B, x: B.bessel(kind, x))
    op.__name__ = name
    op.__doc__ = f"torch.special.{name}: Bessel {kind}(x), elementwise, without a gradient."
    return op


bessel_j0, bessel_j1, bessel_y0, bessel_y1 = (_bessel(k, f"bessel_{k}") for k in ("j0", "j1", "y0", "y1"))
modified_bessel_k0, modified_bessel_k1 = (_bessel(k, f"modified_bessel_{k}") for k in ("k0", "k1"))
scaled_modified_bessel_k0, scaled_modified_bessel_k1 = (_bessel(f"{k}e", f"scaled_modified_bessel_{k}")
                                                        for k in ("k0", "k1"))


def modified_bessel_i0(input: Tensor) -> Tensor:
    """I0(x) without a gradient (``i0`` is the differentiable one)."""
    return NoGrad.apply(to_float(input), op=lambda B, x: B.i0(x))


def modified_bessel_i1(input: Tensor) -> Tensor:
    """I1(x) without a gradient (``special.i1`` is the differentiable one)."""
    return NoGrad.apply(to_float(input), op=lambda B, x: B.i1(x))


def _spherical_j0(B: Backend, x: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        y = B.sin(x) / x
    y = B.where(B.isinf(x), 0, y)  # the limit, as PyTorch's (sin(inf) / inf is nan)
    return B.where(x == 0, 1, y).astype(x.dtype, copy=False)


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """j0(x) = sin(x) / x (1 at 0, 0 at +-inf), without a gradient."""
    return NoGrad.apply(to_float(input), op=_spherical_j0)


class Zeta(ArrayFunction):
    """The Hurwitz zeta function zeta(x, q) = sum_{k>=0} (k + q)^-x. d/dq = -x zeta(x + 1, q); along x
    PyTorch has no derivative and raises."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, q: Any) -> Any:
        ctx.save_for_backward(x, q)
        return B.zeta(x, q)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        if ctx.needs_input_grad[0]:
            raise RuntimeError("the derivative for 'zeta' is not implemented.")
        x, q = ctx.saved_arrays
        return None, gy * -x * B.zeta(x + 1, q)


def zeta(input: Tensor | float, other: Tensor | float) -> Tensor:
    """torch.special.zeta(x, q): the Hurwitz zeta function (a number on either side; integers give the
    default float dtype)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("zeta(): expected a Tensor as input or other, got two numbers")
    x, q = promote(input, other, floating=True)
    like = x if isinstance(x, Tensor) else q
    x, q = (v if isinstance(v, Tensor) else like.new_full((), v) for v in (x, q))
    return Zeta.apply(x, q)
