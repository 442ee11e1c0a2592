"""torch.special's Bessel functions and the Hurwitz zeta function against float64 references written here
(power series, integral representations summed by the trapezoid rule, Euler-Maclaurin), against mpmath
where it is installed, and against PyTorch (marked torch): values, edge values, dtypes, and which of them
have gradients (zeta along q only; the Bessel functions none, as PyTorch's)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor import special

EULER = 0.5772156649015329


# ----------------------------------------------------------------------------------- references
def series_j(x, n, sign=-1.0, terms=60):
    """J_n (sign -1) or I_n (sign +1), n = 0 or 1: sum_k sign^k (x/2)^(2k+n) / (k! (k+n)!)."""
    x = np.asarray(x, dtype=np.float64)
    total, term = np.zeros_like(x), (x / 2) ** n / math.factorial(n)
    for k in range(terms):
        total = total + term
        term = term * sign * (x / 2) ** 2 / ((k + 1) * (k + 1 + n))
    return total


def series_y(x, n, terms=60):
    """Y_0 and Y_1 from their Neumann series (x > 0):
    Y0 = 2/pi (log(x/2) + gamma) J0 + 2/pi sum_{k>=1} (-1)^(k+1) H_k (x^2/4)^k / (k!)^2,
    Y1 = 2/pi (log(x/2) + gamma) J1 - 2 / (pi x) - 1/pi sum_{k>=0} (-1)^k (H_k + H_{k+1}) (x/2)^(2k+1) / (k! (k+1)!)
    (H_0 = 0)."""
    x = np.asarray(x, dtype=np.float64)
    log_term = 2 / np.pi * (np.log(x / 2) + EULER) * series_j(x, n)
    h, total = 0.0, np.zeros_like(x)
    if n == 0:
        term = np.ones_like(x)
        for k in range(1, terms):
            term = term * -(x / 2) ** 2 / (k * k)
            h += 1 / k
            total = total - h * term
        return log_term + 2 / np.pi * total
    term = x / 2
    for k in range(terms):
        total = total + (h + h + 1 / (k + 1)) * term
        h += 1 / (k + 1)
        term = term * -(x / 2) ** 2 / ((k + 1) * (k + 2))
    return log_term - 2 / (np.pi * x) - total / np.pi


def integral_k(x, n, scaled=False):
    """K_n(x) = int_0^inf exp(-x cosh t) cosh(n t) dt (x > 0): the trapezoid rule on a doubly exponentially
    decaying integrand, which converges geometrically. ``scaled``: exp(x) K_n(x)."""
    x = np.asarray(x, dtype=np.float64)[..., None]
    t = np.linspace(0.0, 12.0, 24001)
    w = np.full_like(t, t[1])
    w[0] = w[-1] = t[1] / 2
    exponent = -x * (np.cosh(t) - (1 if scaled else 0))
    return (np.exp(exponent) * np.cosh(n * t) * w).sum(-1)


def hurwitz_zeta(s, q, n=30):
    """sum_{k<n} (k + q)^-s + Euler-Maclaurin's tail at N = n + q (s > 1, q > 0)."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    head = sum((k + q) ** -s for k in range(n))
    big = n + q
    tail = big ** (1 - s) / (s - 1) + big ** -s / 2
    bernoulli = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6]
    rising = s.copy()  # s (s + 1) ... (s + 2j - 2)
    for j, b in enumerate(bernoulli, start=1):
        tail = tail + b / math.factorial(2 * j) * rising * big ** (-s - 2 * j + 1)
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
    return head + tail


X = np.linspace(-8.0, 8.0, 33)
POSITIVE = np.concatenate([np.linspace(0.05, 8.0, 30), [12.0, 25.0, 50.0]])
BESSEL = {
    "bessel_j0": (X, lambda x: series_j(x, 0)),
    "bessel_j1": (X, lambda x: series_j(x, 1)),
    "modified_bessel_i0": (X, lambda x: series_j(x, 0, sign=1.0)),
    "modified_bessel_i1": (X, lambda x: series_j(x, 1, sign=1.0)),
    "bessel_y0": (POSITIVE[:30], lambda x: series_y(x, 0)),
    "bessel_y1": (POSITIVE[:30], lambda x: series_y(x, 1)),
    "modified_bessel_k0": (POSITIVE, lambda x: integral_k(x, 0)),
    "modified_bessel_k1": (POSITIVE, lambda x: integral_k(x, 1)),
    "scaled_modified_bessel_k0": (POSITIVE, lambda x: integral_k(x, 0, scaled=True)),
    "scaled_modified_bessel_k1": (POSITIVE, lambda x: integral_k(x, 1, scaled=True)),
    "spherical_bessel_j0": (X, lambda x: np.where(x == 0, 1.0, np.sin(x) / np.where(x == 0, 1, x))),
}


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_functions_against_float64_references(name):
    x, ref = BESSEL[name]
    got = getattr(special, name)(mt.tensor(x))
    assert got.dtype == mt.float64
    np.testing.assert_allclose(got.numpy(), ref(x), rtol=1e-11, atol=1e-13)
    got32 = getattr(special, name)(mt.tensor(x.astype(np.float32)))
    assert got32.dtype == mt.float32
    np.testing.assert_allclose(got32.numpy(), ref(x.astype(np.float32)), rtol=2e-6, atol=1e-7)
    assert getattr(special, name)(mt.tensor([1, 2])).dtype == mt.float32  # integers: the default float dtype


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_functions_have_no_gradient(name):
    x = mt.tensor([0.5, 2.0], requires_grad=True)
    y = getattr(special, name)(x)
    assert not y.requires_grad and y.grad_fn is None


def test_bessel_edge_values():
    """PyTorch's and SciPy's values at 0, at a negative x, at +-inf and nan (J and Y are nan at +-inf there,
    though their limits are 0)."""
    edges = mt.tensor([0.0, -1.0, math.inf, -math.inf, math.nan])
    nan = math.nan
    want = {
        "bessel_j0": [1.0, series_j(-1.0, 0), nan, nan, nan],
        "bessel_j1": [0.0, series_j(-1.0, 1), nan, nan, nan],
        "bessel_y0": [-math.inf, nan, nan, nan, nan],
        "bessel_y1": [-math.inf, nan, nan, nan, nan],
        "spherical_bessel_j0": [1.0, math.sin(1.0), 0.0, 0.0, nan],
        "modified_bessel_k0": [math.inf, nan, 0.0, nan, nan],
        "modified_bessel_k1": [math.inf, nan, 0.0, nan, nan],
        "scaled_modified_bessel_k0": [math.inf, nan, 0.0, nan, nan],
        "scaled_modified_bessel_k1": [math.inf, nan, 0.0, nan, nan],
    }
    for name, values in want.items():
        np.testing.assert_allclose(getattr(special, name)(edges).numpy(), np.asarray(values, np.float32),
                                   rtol=1e-6, err_msg=name)


S = np.array([1.1, 1.5, 2.0, 3.0, 7.5, 30.0])
Q = np.array([1e-3, 0.3, 1.0, 2.5, 10.0, 1e3])


def test_zeta_against_euler_maclaurin():
    s, q = np.meshgrid(S, Q)
    got = special.zeta(mt.tensor(s), mt.tensor(q)).numpy()
    np.testing.assert_allclose(got, hurwitz_zeta(s, q), rtol=1e-13)
    np.testing.assert_allclose(special.zeta(mt.tensor(2.0, dtype=mt.float64), 1.0).item(), math.pi ** 2 / 6,
                               rtol=1e-15)
    assert special.zeta(2.0, mt.tensor([1, 2])).dtype == mt.float32  # a number and integers: default float


def test_zeta_edge_values():
    x = mt.tensor([1.0, 0.5, 2.0, 2.0, 2.0, 2.0, math.inf, 2.0, -2.0, 1.0], dtype=mt.float64)
    q = mt.tensor([1.0, 1.0, 0.0, -1.0, -1.5, math.inf, 2.0, math.nan, 1.0, math.inf], dtype=mt.float64)
    got = special.zeta(x, q).numpy()
    # zeta(2, -1.5) = sum over k of (k - 1.5)^-2 = 1/2.25 + 1/0.25 + zeta(2, 0.5), finite
    want = [math.inf, math.nan, math.inf, math.inf, 1 / 2.25 + 4 + math.pi ** 2 / 2, math.nan, math.nan, math.nan,
            math.nan, math.inf]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    with pytest.raises(TypeError, match="expected a Tensor"):
        special.zeta(2.0, 1.0)


def test_zeta_gradient_along_q_and_none_along_x():
    """d/dq zeta(x, q) = -x zeta(x + 1, q), against central differences; PyTorch raises along x."""
    s, q0 = np.array([1.5, 2.0, 4.0]), np.array([0.5, 3.0, 1.2])
    q = mt.tensor(q0, requires_grad=True)
    special.zeta(mt.tensor(s), q).sum().backward()
    h = 1e-6
    fd = (hurwitz_zeta(s, q0 + h) - hurwitz_zeta(s, q0 - h)) / (2 * h)
    np.testing.assert_allclose(q.grad.numpy(), fd, rtol=1e-7)
    x = mt.tensor(s, requires_grad=True)
    with pytest.raises(RuntimeError, match="the derivative for 'zeta' is not implemented"):
        special.zeta(x, mt.tensor(q0)).sum().backward()


def test_against_mpmath_far_out():
    mpmath = pytest.importorskip("mpmath")
    x = np.array([0.3, 30.0, 120.0, 700.0])
    cases = {
        "bessel_j0": lambda v: mpmath.besselj(0, v), "bessel_j1": lambda v: mpmath.besselj(1, v),
        "bessel_y0": lambda v: mpmath.bessely(0, v), "bessel_y1": lambda v: mpmath.bessely(1, v),
        "modified_bessel_i0": lambda v: mpmath.besseli(0, v), "modified_bessel_i1": lambda v: mpmath.besseli(1, v),
        "modified_bessel_k0": lambda v: mpmath.besselk(0, v), "modified_bessel_k1": lambda v: mpmath.besselk(1, v),
        "scaled_modified_bessel_k0": lambda v: mpmath.exp(v) * mpmath.besselk(0, v),
        "scaled_modified_bessel_k1": lambda v: mpmath.exp(v) * mpmath.besselk(1, v),
    }
    for name, f in cases.items():
        want = np.array([float(f(mpmath.mpf(v))) for v in x])
        np.testing.assert_allclose(getattr(special, name)(mt.tensor(x)).numpy(), want, rtol=1e-12, atol=1e-300,
                                   err_msg=name)
    s, q = np.array([1.01, 2.0, 50.0]), np.array([1e-5, 0.75, 200.0])
    with mpmath.workdps(40):  # mpmath's zeta(50, 200) at its default 15 digits is off in the 8th
        want = np.array([float(mpmath.zeta(a, b)) for a, b in zip(s, q)])
    # Cephes' (SciPy's and PyTorch's) zeta(50, 200) is off by 6e-11 relative
    np.testing.assert_allclose(special.zeta(mt.tensor(s), mt.tensor(q)).numpy(), want, rtol=1e-10)


# ------------------------------------------------------------------------------------- PyTorch
NAMES = list(BESSEL)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bessel_matches_pytorch(name, dtype):
    """PyTorch's j0, j1, y0 and y1 are its own approximations, off by up to about 6e-8 in float64 (SciPy's,
    here, are the accurate ones: the float64 references above); the others agree to rounding."""
    torch = pytest.importorskip("torch")
    x = np.concatenate([np.linspace(-30, 30, 61), [0.0, 1e-300, 700.0, 800.0, np.inf, -np.inf, np.nan]])
    x = x.astype(dtype)
    got = getattr(special, name)(mt.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ours_exact = name[7:9] not in ("j0", "j1", "y0", "y1") or name.startswith("spherical")
    rtol = 3e-5 if dtype == "float32" else (1e-12 if ours_exact else 1e-7)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12 if dtype == "float64" and ours_exact else 2e-7)


@pytest.mark.torch
def test_zeta_matches_pytorch():
    torch = pytest.importorskip("torch")
    s = np.array([-2.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 7.5, 30.0, np.inf, np.nan])
    q = np.array([-3.0, -1.5, -0.5, 0.0, 1e-3, 0.5, 1.0, 2.0, 10.0, 1e3, np.inf, np.nan])
    s, q = np.meshgrid(s, q)
    got = special.zeta(mt.tensor(s), mt.tensor(q)).numpy()
    want = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    qt = torch.tensor([0.5, 3.0], dtype=torch.float64, requires_grad=True)
    torch.special.zeta(torch.tensor([1.5, 2.0], dtype=torch.float64), qt).sum().backward()
    qm = mt.tensor([0.5, 3.0], dtype=mt.float64, requires_grad=True)
    special.zeta(mt.tensor([1.5, 2.0], dtype=mt.float64), qm).sum().backward()
    np.testing.assert_allclose(qm.grad.numpy(), qt.grad.numpy(), rtol=1e-12)
    for a, b in ((2.0, [1, 2]), ([2, 3], 1), ([2.0], [2.0])):
        mine = special.zeta(*(mt.tensor(v) if isinstance(v, list) else v for v in (a, b)))
        theirs = torch.special.zeta(*(torch.tensor(v) if isinstance(v, list) else v for v in (a, b)))
        assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
