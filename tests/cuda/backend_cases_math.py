"""Parity cases for the element-wise math of the Backend interface: trigonometric, hyperbolic and exponential
functions, the binary float functions, float classifiers and bit twiddling, and the special functions (erfc,
erfinv, the gamma family, Bessel's I0 / I1, sinc, xlogy). Each family gets a normal case and an edge case
(signed zeros, infinities, nan, poles, the ends of a domain), as a GPU's libm and SciPy differ there first."""
from __future__ import annotations

import math

import numpy as np

from backend_cases import ONCE, WITH_HALF, Data, case

INF, NAN = math.inf, math.nan
# Where every real function of one argument is defined: signed zeros, overflow, infinities, nan.
EDGES = [0.0, -0.0, 100.0, -100.0, INF, -INF, NAN]

# ---------------------------------------------------------------------------------- one argument
for _name in ("arctan", "sinh", "cosh", "arcsinh", "exp2"):
    case(_name, "", lambda d: (d.n(3, 4) * 2,), WITH_HALF)
    case(_name, "edges", lambda d: (d.with_edges(d.n(3, 4), EDGES),), WITH_HALF)
case("exp2", "underflow", lambda d: (np.array([-14.0, -24.5, -30.0, -126.0, -149.5, -1100.0], d.dt),), WITH_HALF)
case("exp2", "overflow", lambda d: (np.array([15.9, 16.0, 127.9, 128.0, 1023.9, 1024.0], d.dt),), WITH_HALF)
case("tan", "", lambda d: (d.uniform(-1.4, 1.4, 3, 4),), WITH_HALF)  # away from the poles at +-pi/2
case("tan", "edges", lambda d: (d.with_edges(d.uniform(-1.4, 1.4, 3, 4), EDGES[:2] + EDGES[4:]),), WITH_HALF)
for _name in ("arcsin", "arccos", "arctanh"):  # defined on [-1, 1]: its ends, and nan past them
    case(_name, "", lambda d: (d.uniform(-0.95, 0.95, 3, 4),), WITH_HALF)
    case(_name, "edges", lambda d: (d.with_edges(d.n(3, 4) * 0.3, [1.0, -1.0, 0.0, -0.0, 1.5, -2.0, NAN]),),
         WITH_HALF)
case("arccosh", "", lambda d: (d.pos(3, 4) * 3 + 1,), WITH_HALF)
case("arccosh", "edges", lambda d: (d.with_edges(d.pos(3, 4) + 1, [1.0, 0.5, -1.0, INF, NAN]),), WITH_HALF)

# --------------------------------------------------------------------------------- two arguments
case("arctan2", "broadcast", lambda d: (d.n(3, 4), d.n(4)), WITH_HALF)
case("arctan2", "signed-zeros", lambda d: (np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, INF, INF, NAN], d.dt),
                                           np.array([0.0, 0.0, -0.0, -0.0, INF, -INF, INF, -INF, 1.0], d.dt)),
     WITH_HALF)
case("hypot", "broadcast", lambda d: (d.n(3, 4) * 3, d.n(3, 1) * 3), WITH_HALF)
case("hypot", "edges", lambda d: (np.array([INF, NAN, np.finfo(d.dt).max, 0.0, -INF], d.dt),
                                  np.array([NAN, INF, np.finfo(d.dt).max, -0.0, 1.0], d.dt)), WITH_HALF)
case("copysign", "broadcast", lambda d: (d.n(3, 4), d.n(4)), WITH_HALF)
case("copysign", "zeros-nan", lambda d: (np.array([1.0, 2.0, -3.0, NAN, INF, 0.0], d.dt),
                                         np.array([-0.0, 0.0, 0.0, -1.0, -0.0, -2.0], d.dt)), WITH_HALF)
case("fmod", "signs", lambda d: (d.n(3, 4) * 5, d.with_edges(d.n(4) * 2, [-1.5, 1.5])), WITH_HALF)
case("fmod", "edges", lambda d: (np.array([5.0, -5.0, INF, 1.0, 0.0, -0.0], d.dt),
                                 np.array([0.0, INF, 2.0, NAN, 3.0, -3.0], d.dt)), WITH_HALF)
case("fmod", "int64", lambda d: (d.ints(-50, 50, 3, 4), d.with_edges(d.ints(1, 9, 4), [-7, 3])), ONCE)
for _name in ("logaddexp", "logaddexp2"):
    case(_name, "broadcast", lambda d: (d.n(3, 4) * 30, d.n(4) * 30), WITH_HALF)
    case(_name, "edges", lambda d: (np.array([-INF, -INF, INF, 10.0, NAN, 0.0], d.dt),
                                    np.array([-INF, 0.0, INF, -INF, 1.0, 0.0], d.dt)), WITH_HALF)

# ------------------------------------------------------------------------------- floats as bits
def _near(d: Data) -> tuple:
    """a, and b within a few percent of it (some inside rtol + atol, some not), with infinities and nan."""
    a = d.n(3, 4)
    b = d.with_edges((a * (1 + d.n(3, 4) * 0.02)).astype(d.dt), [INF, NAN, -INF])
    return a, b, 1e-2, 1e-3, False


case("signbit", "", lambda d: (d.with_edges(d.n(3, 4), [0.0, -0.0, NAN, INF, -INF]),), WITH_HALF)
case("signbit", "negative-nan", lambda d: (np.copysign(np.array([NAN, NAN, 0.0, 0.0], d.dt),
                                                       np.array([-1.0, 1.0, -1.0, 1.0], d.dt)),), WITH_HALF)
case("nextafter", "", lambda d: (d.n(3, 4), np.where(d.bools(3, 4), 0.0, d.n(3, 4)).astype(d.dt)), WITH_HALF)
case("nextafter", "edges", lambda d: (np.array([1.0, 1.0, -1.0, 2.0, INF, -INF, NAN, 1.0, 65504.0], d.dt),
                                      np.array([2.0, 0.0, -1.0, INF, 0.0, 0.0, 1.0, NAN, INF], d.dt)), WITH_HALF)
case("frexp", "", lambda d: (d.n(3, 4) * 100,), WITH_HALF)
case("frexp", "edges", lambda d: (np.array([0.0, -0.0, INF, -INF, NAN, 1.0, 0.5, -3.0, 1024.0], d.dt),),
     WITH_HALF)
case("isclose", "", _near, WITH_HALF)
for _equal_nan in (False, True):
    case("isclose", f"edges-equal_nan={_equal_nan}", lambda d, e=_equal_nan: (
        np.array([NAN, NAN, INF, INF, -INF, 1.0, 1.0, 0.0], d.dt),
        np.array([NAN, 1.0, INF, -INF, -INF, 1.001, 1.1, -0.0], d.dt), 0.01, 0.0, e), WITH_HALF)
case("isclose", "int64", lambda d: (d.ints(-5, 5, 3, 4), d.ints(-5, 5, 4), 0.5, 1.0, False), ONCE)
case("isclose", "bool", lambda d: (d.bools(3, 4), d.bools(3, 4), 1e-5, 1e-8, False), ONCE)
case("nan_to_num", "", lambda d: (d.with_edges(d.n(3, 4), [NAN, INF, -INF, NAN]), 0.5, 1e4, -1e4), WITH_HALF)
case("nan_to_num", "past-the-range", lambda d: (np.array([NAN, INF, -INF, 1.0], d.dt), -0.0, 1e300, -1e300),
     WITH_HALF)  # a replacement past the dtype's range is inf, as PyTorch
case("left_shift", "", lambda d: (d.ints(-100, 100, 3, 4), d.ints(0, 20, 4)), ONCE)
case("left_shift", "int32", lambda d: (d.ints(-100, 100, 3, 4).astype(np.int32), np.int32(3)), ONCE)
case("right_shift", "", lambda d: (d.ints(-1000, 1000, 3, 4), d.ints(0, 12, 4)), ONCE)  # arithmetic on negatives
case("right_shift", "uint8", lambda d: (d.ints(0, 256, 3, 4).astype(np.uint8), d.ints(0, 8, 3, 4).astype(np.uint8)),
     ONCE)
for _name in ("gcd", "lcm"):
    case(_name, "", lambda d: (d.with_edges(d.ints(-30, 30, 3, 4), [0, 0, -12]), d.with_edges(d.ints(-12, 12, 4),
                                                                                              [0, 5, 18])), ONCE)
    case(_name, "int32", lambda d: (d.ints(1, 1000, 5).astype(np.int32), d.ints(1, 1000, 5).astype(np.int32)), ONCE)

# ------------------------------------------------------------------------------------------- special
case("erfc", "tails", lambda d: (np.linspace(-6, 12, 97).astype(d.dt),), WITH_HALF)
case("erfc", "", lambda d: (d.with_edges(d.n(3, 5), [0.0, -0.0, 0.46875, INF, -INF, NAN]),), WITH_HALF)
case("erfinv", "", lambda d: (d.uniform(-0.999, 0.999, 3, 5),), WITH_HALF)
case("erfinv", "edges", lambda d: (np.array([1.0, -1.0, 0.0, -0.0, 1.5, -1.5, NAN, 0.9999, -0.99995], d.dt),),
     WITH_HALF)
GAMMA_EDGES = [0.0, -0.0, -1.0, -2.0, 1.0, 2.0, 0.5, -0.5, -2.5, INF, -INF, NAN]  # poles, zeros, the half-integers


def _off_poles(d: Data, *shape: int) -> np.ndarray:
    """Normal values times 5, kept 0.05 away from the poles at 0, -1, -2... (where the functions of the gamma
    family are too steep for a float32 input's rounding to give one answer): the poles are edge cases."""
    x = d.r.standard_normal(shape) * 5
    near = (x < 0.05) & (np.abs(x - np.round(x)) < 0.05)
    x[near] = np.round(x[near]) - 0.1
    return x.astype(d.dt)


for _name in ("lgamma", "digamma"):
    case(_name, "", lambda d: (_off_poles(d, 3, 5),), WITH_HALF)
    case(_name, "edges", lambda d: (np.array(GAMMA_EDGES, d.dt),), WITH_HALF)
for _order in (0, 1, 2, 3):
    case("polygamma", f"n={_order}", lambda d, k=_order: (k, d.with_edges(_off_poles(d, 3, 5), [0.5, -0.5, 30.0])),
         WITH_HALF)
case("polygamma", "edges", lambda d: (1, np.array([0.0, -1.0, INF, NAN, 1e-3, -2.5], d.dt)), WITH_HALF)
for _name in ("i0", "i1", "i0e", "i1e"):
    case(_name, "", lambda d: (d.n(3, 5) * 5,), WITH_HALF)
    case(_name, "edges", lambda d: (np.array([0.0, -0.0, 20.0, -20.0, 100.0, INF, -INF, NAN], d.dt),), WITH_HALF)
for _name in ("erfcx", "log_ndtr"):
    case(_name, "", lambda d: (d.n(3, 5) * 3,), WITH_HALF)
    case(_name, "edges", lambda d: (np.array([0.0, -0.0, 8.0, -8.0, 30.0, -30.0, INF, -INF, NAN], d.dt),), WITH_HALF)


def _incomplete_gamma_edges(d: Data) -> tuple:
    """Every pair of a in {0, 1, 2.5, inf, -1, nan} and x in {0, 2, inf, -1, nan}: PyTorch's edge cases."""
    a, x = np.meshgrid([0.0, 1.0, 2.5, INF, -1.0, NAN], [0.0, 2.0, INF, -1.0, NAN])
    return a.astype(d.dt), x.astype(d.dt)


for _name in ("gammainc", "gammaincc"):
    case(_name, "broadcast", lambda d: (d.pos(3, 4) * 3, d.pos(4) * 3), WITH_HALF)
    case(_name, "edges", _incomplete_gamma_edges, WITH_HALF)
case("sinc", "", lambda d: (d.with_edges(d.n(3, 5) * 3, [0.0, -0.0, 1.0, -2.0, INF, NAN]),), WITH_HALF)
case("xlogy", "broadcast", lambda d: (d.n(3, 4), d.pos(4)), WITH_HALF)
case("xlogy", "edges", lambda d: (np.array([0.0, 0.0, 0.0, 2.0, 2.0, -1.0, NAN, 1.0], d.dt),
                                  np.array([0.0, NAN, INF, 0.0, -1.0, INF, 1.0, 1.0], d.dt)), WITH_HALF)
case("xlogy", "scalar-x", lambda d: (2.0, d.pos(3, 4)), WITH_HALF)
case("xlogy", "scalar-y", lambda d: (d.with_edges(d.n(3, 4), [0.0]), 0.0), WITH_HALF)
case("xlog1py", "broadcast", lambda d: (d.n(3, 4), d.pos(4)), WITH_HALF)
case("xlog1py", "edges", lambda d: (np.array([0.0, 0.0, 0.0, 2.0, 2.0, -1.0, NAN, 1.0], d.dt),
                                    np.array([-1.0, NAN, INF, 0.0, -1.0, INF, 1.0, -0.5], d.dt)), WITH_HALF)
