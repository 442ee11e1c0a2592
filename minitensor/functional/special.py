"""The functions of ``torch.special`` that are not elementwise math of their own elsewhere: ``entr``, ``ndtr``
and ``ndtri``, built on the math family's backend methods (``minitensor/special.py`` is the public namespace).

entr(x) = -x log x (0 at 0, -inf for x < 0); d/dx = -(1 + log x).
ndtr(x) = P(N(0, 1) <= x) = erfc(-x / sqrt 2) / 2 (erfc keeps the lower tail's digits that 1 + erf loses).
ndtri(p) = ndtr^-1(p); d/dp = sqrt(2 pi) exp(y^2 / 2).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tensor import Tensor
from ..backends.base import Backend
from .math import _op, _unary, erfc

__all__: list[str] = []  # torch has these under torch.special only

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

entr = _unary(Entr)
ndtri = _unary(Ndtri)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF: erfc(-x / sqrt 2) / 2."""
    return erfc(input * (-1 / _SQRT2)) * 0.5
