"""The backend contract (design.md section 2): every public method of ``Backend`` has a parity case.

``PARITY`` maps each method name either to a callable that runs it on a backend against a float64 NumPy
reference written here, or to the test (``"test_module.py::test_name"``) where the op family's own suite
checks it against its reference. Adding a method to ``Backend`` without an entry fails
``test_every_backend_method_has_a_parity_case``; a pointer to a test that no longer exists fails too.
"""
from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from minitensor.backends.base import Backend

TESTS = Path(__file__).parent.parent
rng = np.random.default_rng(0)

# Methods that still raise NotImplementedError, with why (none at the moment).
PENDING: set[str] = set()


def public_methods(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))
            and not isinstance(getattr(cls, n), type)}


def host(B: Backend, a: Any) -> np.ndarray:
    return B.to_numpy(a)


def dev(B: Backend, a: Any) -> Any:
    return B.asarray(np.asarray(a))


def close(B: Backend, got: Any, expected: Any, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    g = host(B, got)
    e = np.asarray(expected)
    assert g.shape == e.shape, f"shape {g.shape} != {e.shape}"
    np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol)


def x64(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


def numeric_vjp(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, gy: np.ndarray,
                eps: float = 1e-6) -> np.ndarray:
    """sum(gy * df/dx) by central differences (the reference for each activation's backward)."""
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = np.sum(gy * (f(hi) - f(lo))) / (2 * eps)
    return g


# ----------------------------------------------------------------------------------------- identity
def identity_cases(B: Backend) -> None:
    assert isinstance(B.name, str) and B.xp is not None
    assert type(B).is_available() is True and type(B).device_count() >= 1 and type(B).unavailable_reason() == ""
    B.synchronize()


def seed_case(B: Backend) -> None:
    B.seed(7)
    a = host(B, B.normal((5,), 0.0, 1.0, np.float64))
    B.seed(7)
    assert np.array_equal(a, host(B, B.normal((5,), 0.0, 1.0, np.float64)))


def rng_state_case(B: Backend) -> None:
    """get_rng/set_rng with copy_rng replay the draws (checkpointing's preserve_rng_state), twice from one
    snapshot, and the snapshot does not advance with the generator it was copied from."""
    snapshot = B.copy_rng()
    a = host(B, B.uniform((6,), 0.0, 1.0, np.float64))
    current = B.get_rng()
    for _ in range(2):
        B.set_rng(B.copy_rng(snapshot))
        assert np.array_equal(a, host(B, B.uniform((6,), 0.0, 1.0, np.float64)))
    B.set_rng(current)
    assert B.get_rng() is current
    assert not np.array_equal(a, host(B, B.uniform((6,), 0.0, 1.0, np.float64)))


# ------------------------------------------------------------------------------------------- arrays
def array_cases() -> dict[str, Callable[[Backend], None]]:
    def asarray(B):
        a = B.asarray([1, 2], dtype=np.float32)
        assert host(B, a).dtype == np.float32 and host(B, a).tolist() == [1.0, 2.0]

    def to_numpy(B):
        out = B.to_numpy(dev(B, [1.5]))
        assert isinstance(out, np.ndarray) and out.tolist() == [1.5]

    def factory(name, expected):
        def case(B):
            for dt in (np.float32, np.float64, np.int64):
                a = getattr(B, name)((2, 3), dt)
                assert host(B, a).dtype == dt and host(B, a).shape == (2, 3)
                if expected is not None:
                    close(B, a, np.full((2, 3), expected, dt))
        return case

    def full(B):
        close(B, B.full((2, 2), 3.5, np.float64), np.full((2, 2), 3.5))

    def arange(B):
        close(B, B.arange(1, 7, 2, np.int64), np.arange(1, 7, 2))
        close(B, B.arange(0.0, 1.0, 0.25, np.float32), np.arange(0, 1, 0.25))

    def linspace(B):
        close(B, B.linspace(-1.0, 1.0, 5, np.float64), np.linspace(-1, 1, 5))

    def eye(B):
        close(B, B.eye(2, 3, np.float64), np.eye(2, 3))

    def empty_strided(B):
        a = B.empty_strided((2, 3), (1, 2), np.float32)
        assert a.shape == (2, 3) and a.strides == (4, 8) and host(B, a).dtype == np.float32
        assert B.empty_strided((0, 4), (4, 1), np.float64).shape == (0, 4)

    def astype(B):
        a = dev(B, np.array([1.7, -2.2]))
        assert host(B, B.astype(a, np.int64)).tolist() == [1, -2]
        assert B.astype(a, np.float64) is a

    def copy(B):
        a = dev(B, [1.0, 2.0])
        c = B.copy(a)
        c[0] = 5.0
        assert host(B, a).tolist() == [1.0, 2.0]

    def ascontiguous(B):
        a = dev(B, np.arange(6.0).reshape(2, 3)).T
        c = B.ascontiguous(a)
        assert c.flags.c_contiguous
        close(B, c, np.arange(6.0).reshape(2, 3).T)

    def copy_into(B):
        dst = B.zeros((2, 3), np.float32)
        B.copy_into(dst, dev(B, np.array([1.5, 2.5, 3.5])))
        close(B, dst, np.tile([1.5, 2.5, 3.5], (2, 1)))

    def storage_offset(B):
        a = dev(B, np.arange(24.0).reshape(4, 6))
        assert B.storage_offset(a) == 0 and B.storage_offset(a[1:, 2:][1:]) == (2 * 6 + 2) * 8
        assert B.data_ptr(a[1]) - B.data_ptr(a) == 48 and B.storage_offset(a.T[::-1]) == 5 * 8

    def isfinite_all(B):
        assert B.isfinite_all(dev(B, [1.0, 2.0])) is True
        assert B.isfinite_all(dev(B, [1.0, np.inf])) is False
        assert B.isfinite_all(dev(B, [np.nan])) is False

    return {"asarray": asarray, "to_numpy": to_numpy, "empty": factory("empty", None),
            "zeros": factory("zeros", 0), "ones": factory("ones", 1), "full": full, "arange": arange,
            "linspace": linspace, "eye": eye, "astype": astype, "copy": copy, "ascontiguous": ascontiguous,
            "copy_into": copy_into, "isfinite_all": isfinite_all, "empty_strided": empty_strided,
            "storage_offset": storage_offset, "data_ptr": storage_offset}


# ------------------------------------------------------------------------------------------- random
def random_cases() -> dict[str, Callable[[Backend], None]]:
    def uniform(B):
        for dt in (np.float32, np.float64, np.float16):
            u = host(B, B.uniform((4000,), -2.0, 3.0, dt))
            assert u.dtype == dt and u.min() >= -2.0 and u.max() <= 3.0
            assert abs(u.astype(np.float64).mean() - 0.5) < 0.1

    def normal(B):
        for dt in (np.float32, np.float64):
            z = host(B, B.normal((8000,), 1.0, 2.0, dt))
            assert z.dtype == dt and abs(z.mean() - 1.0) < 0.1 and abs(z.std() - 2.0) < 0.1

    def randint(B):
        r = host(B, B.randint(-2, 3, (2000,), np.int64))
        assert r.dtype == np.int64 and set(r.tolist()) == {-2, -1, 0, 1, 2}

    def bernoulli(B):
        m = host(B, B.bernoulli(0.3, (10000,)))
        assert m.dtype == np.bool_ and abs(m.mean() - 0.3) < 0.03

    def permutation(B):
        assert sorted(host(B, B.permutation(10)).tolist()) == list(range(10))
        stream = B.xp.random.default_rng(4)  # a user's Generator's stream: the same draws again
        again = B.xp.random.default_rng(4)
        assert host(B, B.permutation(10, stream)).tolist() == host(B, B.permutation(10, again)).tolist()

    def multinomial(B):
        w = dev(B, [[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]])
        drawn = host(B, B.multinomial(w, 20000, True))
        assert drawn.dtype == np.int64 and drawn.shape == (2, 20000)
        assert abs((drawn[0] == 2).mean() - 0.75) < 0.02 and not (drawn[0] == 1).any()
        assert not (drawn[1] == 0).any()
        distinct = host(B, B.multinomial(w, 2, False))
        assert sorted(distinct[0].tolist()) == [0, 2] and sorted(distinct[1].tolist()) == [1, 2]

    def randint_wide(B):
        """A span past int64's (random_() over all of int64) wraps the uint64 offsets to int64."""
        r = host(B, B.randint(-2**63, 2**63, (4000,), np.int64))
        assert r.dtype == np.int64 and (r < 0).mean() > 0.4 and (r > 0).mean() > 0.4
        randint(B)

    def exponential(B):
        for dt in (np.float32, np.float64, np.float16):
            e = host(B, B.exponential((20000,), 2.0, dt)).astype(np.float64)
            assert host(B, B.exponential((2,), 2.0, dt)).dtype == dt
            assert e.min() >= 0 and np.isfinite(e).all() and abs(e.mean() - 0.5) < 0.03
            assert abs(np.median(e) - np.log(2) / 2) < 0.03

    def geometric(B):
        for dt in (np.float32, np.int64):
            k = host(B, B.geometric((20000,), 0.25, dt))
            assert k.dtype == dt and k.min() >= 1 and np.array_equal(k, np.round(k))
            assert abs(k.mean() - 4.0) < 0.15 and abs((k == 1).mean() - 0.25) < 0.02

    def cauchy(B):
        c = host(B, B.cauchy((20000,), 1.0, 2.0, np.float32))
        assert c.dtype == np.float32 and np.isfinite(c).all()
        quartiles = np.percentile(c.astype(np.float64), [25, 50, 75])  # median -+ sigma
        np.testing.assert_allclose(quartiles, [-1.0, 1.0, 3.0], atol=0.15)

    def poisson(B):
        rates = dev(B, np.repeat(np.array([0.0, 0.5, 30.0], np.float32), 10000).reshape(3, 10000))
        k = host(B, B.poisson(rates))
        assert k.dtype == np.float32 and k.shape == (3, 10000) and (k[0] == 0).all()
        assert abs(k[1].mean() - 0.5) < 0.03 and abs(k[2].mean() - 30) < 0.3 and abs(k[2].var() - 30) < 2.5

    return {"uniform": uniform, "normal": normal, "randint": randint_wide, "bernoulli": bernoulli,
            "permutation": permutation, "multinomial": multinomial, "seed": seed_case,
            "get_rng": rng_state_case, "set_rng": rng_state_case, "copy_rng": rng_state_case,
            "exponential": exponential, "geometric": geometric, "cauchy": cauchy, "poisson": poisson}


# -------------------------------------------------------------------------------------- elementwise
def elementwise_cases() -> dict[str, Callable[[Backend], None]]:
    x = x64(3, 4)
    pos = np.abs(x) + 0.1

    def unary(name, ref, data):
        def case(B):
            close(B, getattr(B, name)(dev(B, data)), ref(data))
            assert host(B, getattr(B, name)(dev(B, data.astype(np.float32)))).dtype == np.float32
        return case

    def power(B):
        close(B, B.power(dev(B, pos), 1.5), pos ** 1.5)
        close(B, B.power(dev(B, pos), dev(B, x)), pos ** x)
        assert host(B, B.power(dev(B, pos.astype(np.float32)), 2.0)).dtype == np.float32

    def binary(name, ref):
        def case(B):
            y = x64(4)
            close(B, getattr(B, name)(dev(B, x), dev(B, y)), ref(x, y))
        return case

    def clip(B):
        close(B, B.clip(dev(B, x), -0.5, 0.5), np.clip(x, -0.5, 0.5))
        close(B, B.clip(dev(B, x), None, 0.5), np.minimum(x, 0.5))

    def where(B):
        c = x > 0
        close(B, B.where(dev(B, c), dev(B, x), dev(B, -x)), np.abs(x))

    cases = {name: unary(name, ref, data) for name, ref, data in [
        ("abs", np.abs, x), ("exp", np.exp, x), ("log", np.log, pos), ("log1p", np.log1p, pos),
        ("expm1", np.expm1, x), ("sqrt", np.sqrt, pos), ("sign", np.sign, x), ("sin", np.sin, x),
        ("cos", np.cos, x)]}
    cases.update(power=power, maximum=binary("maximum", np.maximum), minimum=binary("minimum", np.minimum),
                 clip=clip, where=where)
    cases.update({name: unary(name, ref, data) for name, ref, data in [
        ("log2", np.log2, pos), ("log10", np.log10, pos), ("floor", np.floor, 3 * x), ("ceil", np.ceil, 3 * x),
        ("trunc", np.trunc, 3 * x)]})

    unit = np.tanh(x)  # inside (-1, 1): the domain of arcsin, arccos, arctanh, erfinv
    cases.update({name: unary(name, ref, data) for name, ref, data in [
        ("tan", np.tan, unit), ("arcsin", np.arcsin, unit), ("arccos", np.arccos, unit), ("arctan", np.arctan, x),
        ("sinh", np.sinh, x), ("cosh", np.cosh, x), ("arcsinh", np.arcsinh, x), ("arccosh", np.arccosh, 1 + pos),
        ("arctanh", np.arctanh, unit), ("exp2", np.exp2, x)]})
    cases.update({name: binary(name, ref) for name, ref in [
        ("arctan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign), ("fmod", np.fmod),
        ("logaddexp", np.logaddexp), ("logaddexp2", np.logaddexp2)]})

    def erfc(B):
        data = np.linspace(-3, 25, 113)  # far into the tail, where 1 - erf(x) would be 0
        close(B, B.erfc(dev(B, data)), np.vectorize(math.erfc)(data), rtol=1e-13, atol=0)
        assert host(B, B.erfc(dev(B, data.astype(np.float32)))).dtype == np.float32

    def erfinv(B):
        data = np.concatenate([unit.ravel(), [0.0, 1 - 1e-12, -1 + 1e-12]])
        y = host(B, B.erfinv(dev(B, data)))
        close(B, np.vectorize(math.erf)(y), data, rtol=1e-15, atol=1e-15)
        edges = host(B, B.erfinv(dev(B, np.array([1.0, -1.0, 1.5, np.nan], dtype=np.float32))))
        assert edges.dtype == np.float32 and edges[0] == np.inf and edges[1] == -np.inf and np.isnan(edges[2:]).all()

    cases.update(erfc=erfc, erfinv=erfinv)

    def round_(B):
        data = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.25, 2.675, -3.14159])
        close(B, B.round(dev(B, data), 0), [0.0, 2.0, 2.0, -0.0, -2.0, 1.0, 3.0, -3.0])
        close(B, B.round(dev(B, data), 1), np.round(data, 1))
        close(B, B.round(dev(B, np.array([1234.5, -55.0])), -1), [1230.0, -60.0])

    def remainder(B):
        a, b = np.array([5.0, -5.0, 5.0, -5.0, 7.5]), np.array([3.0, 3.0, -3.0, -3.0, 2.0])
        close(B, B.remainder(dev(B, a), dev(B, b)), [2.0, 1.0, -1.0, -2.0, 1.5])
        assert host(B, B.remainder(dev(B, np.array([7, -7])), 3)).tolist() == [1, 2]

    def expand_dims(B):
        assert host(B, B.expand_dims(dev(B, x), (0, 2))).shape == (1, 3, 1, 4)

    def squeeze(B):
        close(B, B.squeeze(dev(B, x.reshape(3, 1, 4, 1)), (1, 3)), x)
        assert host(B, B.squeeze(dev(B, x[:1]), 0)).shape == (4,)

    cases.update(round=round_, remainder=remainder, expand_dims=expand_dims, squeeze=squeeze)
    return cases


# -------------------------------------------------------------------------------------- comparisons
def comparison_cases() -> dict[str, Callable[[Backend], None]]:
    a, b = np.array([1.0, 2.0, np.nan, -np.inf, 3.0]), np.array([1.0, 3.0, 2.0, -np.inf, 2.0])
    i, j = np.array([12, -5, 0, 7]), np.array([10, 3, -1, 7])
    t, f = np.array([True, True, False, False]), np.array([True, False, True, False])

    def binary(name, ref, x, y):
        def case(B):
            got = host(B, getattr(B, name)(dev(B, x), dev(B, y)))
            assert got.dtype == ref(x, y).dtype and np.array_equal(got, ref(x, y)), (name, got)
            scalar = host(B, getattr(B, name)(dev(B, x), y[1].item()))  # a Python scalar second operand
            assert np.array_equal(scalar, ref(x, y[1].item())), (name, scalar)
        return case

    def unary(name, ref, x):
        def case(B):
            got = host(B, getattr(B, name)(dev(B, x)))
            assert got.dtype == ref(x).dtype and np.array_equal(got, ref(x)), (name, got)
        return case

    cases = {name: binary(name, getattr(np, name), a, b) for name in (
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")}
    cases.update({name: binary(name, getattr(np, name), t, f) for name in ("logical_and", "logical_or",
                                                                        "logical_xor")})
    cases.update({name: binary(name, getattr(np, name), i, j) for name in ("bitwise_and", "bitwise_or",
                                                                        "bitwise_xor")})
    shifts = np.array([0, 1, 3, 62])
    cases.update({name: binary(name, getattr(np, name), i, shifts) for name in ("left_shift", "right_shift")})

    def isclose(B):
        x = np.array([1.0, 1.0, np.nan, np.inf, -np.inf, 0.0, 1e-9])
        y = np.array([1.0 + 1e-6, 1.1, np.nan, np.inf, np.inf, 1e-9, 0.0])
        for rtol, atol, equal_nan in ((1e-5, 1e-8, False), (0.2, 0.0, True), (0.0, 0.0, False)):
            got = host(B, B.isclose(dev(B, x), dev(B, y), rtol, atol, equal_nan))
            assert np.array_equal(got, np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)), got
        assert host(B, B.isclose(dev(B, t), dev(B, f), 0.1, 0.1, False)).tolist() == [True, False, False, True]

    cases["isclose"] = isclose
    cases.update(logical_not=unary("logical_not", np.logical_not, t), bitwise_not=unary("bitwise_not", np.invert, i),
                 isnan=unary("isnan", np.isnan, a), isinf=unary("isinf", np.isinf, a),
                 isfinite=unary("isfinite", np.isfinite, a))
    cases["signbit"] = unary("signbit", np.signbit, np.array([-0.0, 0.0, -1.5, 2.0, -np.nan, np.nan, -np.inf]))
    cases.update({name: binary(name, getattr(np, name), i, j) for name in ("gcd", "lcm")})
    cases["nextafter"] = binary("nextafter", np.nextafter, np.array([1.0, 0.0, -2.5, np.inf, 3.0]),
                                np.array([2.0, -1.0, -2.5, 0.0, 1.0]))

    def frexp(B):
        x = np.array([0.0, -0.0, 1.0, -3.0, 0.1, 1e-310, np.inf, 6e4])
        for dt in (np.float64, np.float32, np.float16, np.dtype("bfloat16")):
            xd = x.astype(dt)
            m, e = (host(B, r) for r in B.frexp(dev(B, xd)))
            assert m.dtype == dt and e.dtype == np.int32
            finite = np.isfinite(xd.astype(np.float64))
            np.testing.assert_array_equal((m.astype(np.float64) * 2.0 ** e)[finite], xd.astype(np.float64)[finite])
            nonzero = finite & (xd.astype(np.float64) != 0)
            assert ((np.abs(m.astype(np.float64)) >= 0.5) & (np.abs(m.astype(np.float64)) < 1))[nonzero].all()

    cases["frexp"] = frexp
    return cases


# ------------------------------------------------------------------------------------------- reduce
def reduce_cases() -> dict[str, Callable[[Backend], None]]:
    x = x64(2, 3, 4)

    def reduction(name, ref):
        def case(B):
            for axis in (None, (1,), (0, 2)):
                for keep in (False, True):
                    close(B, getattr(B, name)(dev(B, x), axis, keep), ref(x, axis=axis, keepdims=keep))
        return case

    def var(B):
        for correction in (0, 1):
            close(B, B.var(dev(B, x), (0, 2), correction, True), np.var(x, axis=(0, 2), ddof=correction,
                                                                        keepdims=True))

    def arg(name):
        def case(B):
            data = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]])  # ties: the first index
            for axis in (0, 1):
                got = host(B, getattr(B, name)(dev(B, data), axis, True))
                np.testing.assert_array_equal(got, getattr(np, name)(data, axis=axis, keepdims=True))
        return case

    def logical(name):
        def case(B):
            b = x > 0
            for axis in (None, (0,), (1, 2)):
                got = host(B, getattr(B, name)(dev(B, b), axis, False))
                np.testing.assert_array_equal(got, getattr(np, name)(b, axis=axis))
        return case

    def logsumexp(B):
        big = x * 1000
        ref = np.log(np.sum(np.exp(big - big.max(1, keepdims=True)), 1)) + big.max(1)
        close(B, B.logsumexp(dev(B, big), (1,), False), ref, rtol=1e-12)
        with np.errstate(divide="ignore"):
            out = host(B, B.logsumexp(dev(B, np.full((2, 2), -np.inf)), (1,), False))
        assert np.all(out == -np.inf)

    def cumsum(B):
        for axis in (0, 2):
            close(B, B.cumsum(dev(B, x), axis), np.cumsum(x, axis))
        ints = host(B, B.cumsum(dev(B, np.array([[1, 2], [3, 4]], dtype=np.int32)), 1))
        assert ints.dtype == np.int32 and ints.tolist() == [[1, 3], [3, 7]]

    def running(name, accumulate):
        def case(B):
            data = np.array([[1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan, 1.0], [4.0, 1.0, 1.0, 0.5, 2.0, 0.5, 7.0, 0.0]])
            values, indices = B.cummax(dev(B, data), 1) if name == "cummax" else B.cummin(dev(B, data), 1)
            with np.errstate(invalid="ignore"):
                close(B, values, accumulate(data, axis=1))
            expected = [[0, 1, 2, 2, 4, 4, 6, 6], [0, 0, 0, 0, 0, 0, 6, 6]] if name == "cummax" else \
                [[0, 0, 0, 0, 4, 4, 6, 6], [0, 1, 2, 3, 3, 5, 5, 7]]  # the latest position on ties, nans win
            assert host(B, indices).dtype == np.int64 and host(B, indices).tolist() == expected
            for axis in (0, 2):
                close(B, (B.cummax if name == "cummax" else B.cummin)(dev(B, x), axis)[0], accumulate(x, axis=axis))
        return case

    def logcumsumexp(B):
        big = x * 300
        for axis in (0, 2):
            close(B, B.logcumsumexp(dev(B, big), axis), np.logaddexp.accumulate(big, axis=axis), rtol=1e-12)

    def argsort(B):
        data = np.array([[2.0, np.nan, 1.0, 2.0, np.nan, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0, 3.0]])
        assert host(B, B.argsort(dev(B, data), 1, False)).tolist() == [[5, 2, 0, 3, 1, 4], [3, 4, 0, 1, 2, 5]]
        assert host(B, B.argsort(dev(B, data), 1, True)).tolist() == [[1, 4, 0, 3, 2, 5], [5, 0, 1, 2, 3, 4]]
        for axis in (0, 1, 2):
            assert np.array_equal(host(B, B.argsort(dev(B, x), axis, False)), np.argsort(x, axis, kind="stable"))

    return {"cumsum": cumsum, "cummax": running("cummax", np.maximum.accumulate),
            "cummin": running("cummin", np.minimum.accumulate), "logcumsumexp": logcumsumexp, "argsort": argsort,
            "sum": reduction("sum", np.sum), "mean": reduction("mean", np.mean), "var": var,
            "prod": reduction("prod", np.prod), "amax": reduction("amax", np.amax),
            "amin": reduction("amin", np.amin), "argmax": arg("argmax"), "argmin": arg("argmin"),
            "all": logical("all"), "any": logical("any"), "logsumexp": logsumexp}


# -------------------------------------------------------------------------------------------- shape
def shape_cases() -> dict[str, Callable[[Backend], None]]:
    x = x64(2, 3, 4)

    def reshape(B):
        close(B, B.reshape(dev(B, x), (6, -1)), x.reshape(6, 4))

    def transpose(B):
        close(B, B.transpose(dev(B, x), (2, 0, 1)), x.transpose(2, 0, 1))

    def broadcast_to(B):
        close(B, B.broadcast_to(dev(B, x[:, :1]), (5, 2, 3, 4)), np.broadcast_to(x[:, :1], (5, 2, 3, 4)))

    def concatenate(B):
        close(B, B.concatenate([dev(B, x), dev(B, x[:, :1])], 1), np.concatenate([x, x[:, :1]], 1))

    def stack(B):
        close(B, B.stack([dev(B, x), dev(B, -x)], 2), np.stack([x, -x], 2))

    def tile(B):
        close(B, B.tile(dev(B, x), (2, 1, 1, 3)), np.tile(x, (2, 1, 1, 3)))

    def pad(B):
        widths = [(0, 0), (1, 2), (2, 1)]
        close(B, B.pad(dev(B, x), widths, "constant", 1.5), np.pad(x, widths, constant_values=1.5))
        close(B, B.pad(dev(B, x), widths, "reflect", 0.0), np.pad(x, widths, mode="reflect"))
        close(B, B.pad(dev(B, x), widths, "edge", 0.0), np.pad(x, widths, mode="edge"))

    def take_along_axis(B):
        idx = rng.integers(0, 3, (2, 5, 4))
        close(B, B.take_along_axis(dev(B, x), dev(B, idx), 1), np.take_along_axis(x, idx, 1))

    def scatter_add_along_axis(B):
        idx = np.array([[0, 0, 2], [1, 1, 1]])
        src = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        expected = np.zeros((2, 4))
        for i in range(2):
            for j in range(3):
                expected[i, idx[i, j]] += src[i, j]  # repeated indices accumulate
        out = B.scatter_add_along_axis(B.zeros((2, 4), np.float64), dev(B, idx), dev(B, src), 1)
        close(B, out, expected)

    def index_add(B):
        out = B.zeros((3, 2), np.float64)
        B.index_add(out, (dev(B, np.array([0, 2, 0])),), dev(B, np.ones((3, 2))))
        close(B, out, [[2, 2], [0, 0], [1, 1]])
        index = np.array([1, 0, 1, 1])
        for dt in ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32"):
            base, src = np.array([1, 0, 3]).astype(dt), np.array([1, 1, 0, 1]).astype(dt)
            expected = base.copy()
            np.add.at(expected, index, src)  # bool: or; int8 etc.: wrap-around
            got = host(B, B.index_add(dev(B, base.copy()), (dev(B, index),), dev(B, src)))
            assert got.dtype == expected.dtype and np.array_equal(got, expected), dt

    def sum_to_shape(B):
        g = x64(5, 2, 3, 4)
        close(B, B.sum_to_shape(dev(B, g), (2, 1, 4)), g.sum(axis=(0, 2)).reshape(2, 1, 4))
        close(B, B.sum_to_shape(dev(B, g), (4,)), g.sum(axis=(0, 1, 2)))
        close(B, B.sum_to_shape(dev(B, g), ()), g.sum())
        close(B, B.sum_to_shape(dev(B, g), g.shape), g)

    def split(B):
        pieces = B.split(dev(B, x), [1, 3], 2)
        assert len(pieces) == 3
        for got, expected in zip(pieces, np.split(x, [1, 3], axis=2)):
            close(B, got, expected)

    def moveaxis(B):
        close(B, B.moveaxis(dev(B, x), 2, 0), np.moveaxis(x, 2, 0))

    def take(B):
        idx = np.array([2, 0, 2])
        close(B, B.take(dev(B, x), dev(B, idx), 1), x[:, idx])

    def flip(B):
        close(B, B.flip(dev(B, x), 1), x[:, ::-1])
        close(B, B.flip(dev(B, x), (0, 2)), x[::-1, :, ::-1])

    def cumprod(B):
        close(B, B.cumprod(dev(B, x), 2), np.cumprod(x, axis=2))
        close(B, B.cumprod(dev(B, np.array([2.0, 3.0, 0.5, -1.0])), 0), [2.0, 6.0, 3.0, -3.0])

    def tril(B):
        m = x64(2, 3, 4)
        close(B, B.tril(dev(B, m), 0), np.tril(m))
        close(B, B.tril(dev(B, m), -1), np.tril(m, -1))

    def triu(B):
        m = x64(2, 4, 3)
        close(B, B.triu(dev(B, m), 1), np.triu(m, 1))
        close(B, B.triu(dev(B, np.full((3, 3), -np.inf)), 1), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])

    def may_share_memory(B):
        a = dev(B, x)
        assert B.may_share_memory(a, a[1:]) is True
        assert B.may_share_memory(a, B.copy(a)) is False

    return {"reshape": reshape, "transpose": transpose, "broadcast_to": broadcast_to,
            "concatenate": concatenate, "stack": stack, "tile": tile, "pad": pad,
            "take_along_axis": take_along_axis, "scatter_add_along_axis": scatter_add_along_axis,
            "index_add": index_add, "sum_to_shape": sum_to_shape, "split": split, "moveaxis": moveaxis,
            "take": take, "may_share_memory": may_share_memory, "flip": flip, "cumprod": cumprod, "tril": tril,
            "triu": triu}


def linalg_cases() -> dict[str, Callable[[Backend], None]]:
    def matmul(B):
        a, b = x64(4, 2, 3), x64(3, 5)
        close(B, B.matmul(dev(B, a), dev(B, b)), np.matmul(a, b), rtol=1e-10)
        close(B, B.matmul(dev(B, b).T, dev(B, a).swapaxes(-1, -2)), np.matmul(b.T, a.swapaxes(-1, -2)),
              rtol=1e-10)

    def einsum(B):
        a, b, c = x64(2, 3, 4), x64(4, 5), x64(5)
        close(B, B.einsum("bij,jk,k->bi", [dev(B, a), dev(B, b), dev(B, c)]), np.einsum("bij,jk,k->bi", a, b, c),
              rtol=1e-10)
        m = x64(3, 4, 4)
        close(B, B.einsum("...ii->...i", [dev(B, m)]), np.einsum("...ii->...i", m))
    return {"matmul": matmul, "einsum": einsum}


def rearrange_cases() -> dict[str, Callable[[Backend], None]]:
    x = x64(3, 4, 5)
    idx = rng.integers(0, 3, (2, 4, 5))

    def scatter_along_axis(B):
        src = x64(2, 4, 5)
        for reduce, ufunc in ((None, None), ("sum", np.add), ("prod", np.multiply), ("amax", np.maximum),
                              ("amin", np.minimum)):
            expected = x.copy()
            grid = np.ix_(*[np.arange(n) for n in idx.shape])
            where = (idx,) + grid[1:]
            if ufunc is None:
                expected[where] = src
            else:
                ufunc.at(expected, where, src)
            got = B.scatter_along_axis(dev(B, x.copy()), dev(B, idx), dev(B, src), 0, reduce)
            if reduce is None:  # repeated indices: any one of the values written may win
                g, untouched = host(B, got), np.ones(x.shape, bool)
                untouched[where] = False
                assert np.isin(g[where], src).all() and np.array_equal(g[untouched], x[untouched])
            else:
                close(B, got, expected, rtol=1e-12)

    def combine_at(B):
        """Every dtype a tensor can have, repeated positions, a 2-d advanced index: NumPy's ufunc.at."""
        where = (np.array([0, 2, 0, 0, 1]), np.array([1, 3, 1, 1, 0]))
        for dt in ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64"):
            base = np.arange(1, 13).reshape(3, 4).astype(dt)
            src = np.array([2, -1, 3, 2, 5]).astype(dt)
            for reduce, ufunc in (("prod", np.multiply), ("amax", np.maximum), ("amin", np.minimum)):
                expected = base.copy()
                ufunc.at(expected, where, src)
                got = B.combine_at(reduce, dev(B, base.copy()), tuple(dev(B, w) for w in where), dev(B, src))
                assert host(B, got).dtype == expected.dtype, (dt, reduce)
                np.testing.assert_array_equal(host(B, got).astype(np.float64), expected.astype(np.float64))

    def roll(B):
        close(B, B.roll(dev(B, x), (1, -2), (0, 2)), np.roll(x, (1, -2), (0, 2)))

    def diagonal(B):
        close(B, B.diagonal(dev(B, x), 1, 0, 2), np.diagonal(x, 1, 0, 2))

    def diagonal_scatter(B):
        d = x64(4, 2)
        got = host(B, B.diagonal_scatter(dev(B, d), (3, 4, 5), -1, 0, 2))
        np.testing.assert_array_equal(np.diagonal(got, -1, 0, 2), d)
        assert np.count_nonzero(got) == d.size

    def argwhere(B):
        m = x > 0.5
        close(B, B.argwhere(dev(B, m)), np.argwhere(m))

    def repeat(B):
        close(B, B.repeat(dev(B, x), dev(B, np.array([1, 0, 2])), 0), np.repeat(x, [1, 0, 2], 0))
        close(B, B.repeat(dev(B, x), 2, 1), np.repeat(x, 2, 1))

    def triangle_indices(B):
        close(B, B.triangle_indices(3, 4, 1, False), np.stack(np.tril_indices(3, 1, 4)))
        close(B, B.triangle_indices(4, 3, -1, True), np.stack(np.triu_indices(4, -1, 3)))

    def sliding_window(B):
        ref = np.lib.stride_tricks.sliding_window_view(x, 2, axis=2)[:, :, ::2]
        close(B, B.sliding_window(dev(B, x), 2, 2, 2), ref)

    def sliding_window_add(B):
        g = x64(3, 3, 5, 2)  # windows of 2 every 1 along axis 1 (length 4)
        expected = np.zeros((3, 4, 5))
        for w in range(3):
            expected[:, w:w + 2] += np.moveaxis(g[:, w], -1, 1)
        close(B, B.sliding_window_add(dev(B, g), 4, 1, 1), expected, rtol=1e-12)
    return {"scatter_along_axis": scatter_along_axis, "combine_at": combine_at, "roll": roll, "diagonal": diagonal,
            "diagonal_scatter": diagonal_scatter, "argwhere": argwhere, "repeat": repeat,
            "triangle_indices": triangle_indices, "sliding_window": sliding_window,
            "sliding_window_add": sliding_window_add}


def spd(n: int, *batch: int) -> np.ndarray:
    a = x64(*batch, n, n)
    return a @ a.swapaxes(-1, -2) + n * np.eye(n)


def solve_cases() -> dict[str, Callable[[Backend], None]]:
    a, b = x64(2, 4, 4), x64(2, 4, 3)

    def inv(B):
        close(B, B.inv(dev(B, a)), np.linalg.inv(a), rtol=1e-9, atol=1e-10)

    def inv_unchecked(B):
        close(B, B.inv_unchecked(dev(B, a)), np.linalg.inv(a), rtol=1e-9, atol=1e-10)
        singular = host(B, B.inv_unchecked(dev(B, np.array([[1.0, 2.0], [2.0, 4.0]]))))  # no error: inf / nan
        assert singular.shape == (2, 2) and not np.isfinite(singular).all()

    def solve(B):
        close(B, B.solve(dev(B, a), dev(B, b)), np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)

    def solve_triangular(B):
        for upper in (False, True):
            t = np.triu(a) if upper else np.tril(a)
            t = t + 4 * np.eye(4)  # away from singular
            close(B, B.solve_triangular(dev(B, t), dev(B, b), upper), np.linalg.solve(t, b), rtol=1e-9, atol=1e-10)
        # a zero on the diagonal: substitution's infinities and NaNs, no error (as trsm and PyTorch)
        singular = host(B, B.solve_triangular(dev(B, np.array([[1.0, 0.0], [1.0, 0.0]])), dev(B, np.ones((2, 1))),
                                              False))
        assert singular.shape == (2, 1) and np.isnan(singular[1, 0])

    def slogdet(B):
        sign, logabsdet = B.slogdet(dev(B, a))
        close(B, sign, np.linalg.slogdet(a)[0])
        close(B, logabsdet, np.linalg.slogdet(a)[1], rtol=1e-10)

    def det(B):
        close(B, B.det(dev(B, a)), np.linalg.det(a), rtol=1e-10)

    def lu_factor(B):
        for shape in ((2, 4, 4), (2, 5, 3), (3, 2, 4)):
            m = x64(*shape)
            lu, pivots, info = (host(B, r) for r in B.lu_factor(dev(B, m)))
            k = min(shape[-2:])
            low = np.tril(lu[..., :, :k], -1) + np.eye(shape[-2], k)
            rows = host(B, B.lu_permutation(dev(B, pivots), shape[-2]))
            np.testing.assert_allclose(np.take_along_axis(m, rows[..., None], -2), low @ np.triu(lu[..., :k, :]),
                                       atol=1e-12)
            assert pivots.dtype == np.int32 and pivots.min() >= 1 and info.dtype == np.int32 and not info.any()
            # getrf's pivots: the largest |entry| of each column at or below the diagonal, 1-based
            assert (pivots[..., 0] == np.abs(m[..., :, 0]).argmax(-1) + 1).all()
        _, _, info = B.lu_factor(dev(B, np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]]])))
        assert host(B, info).tolist() == [2, 1]  # the first exact zero on U's diagonal, no error

    def lu_permutation(B):
        rows = host(B, B.lu_permutation(dev(B, np.array([[3, 3, 3], [1, 3, 3]], dtype=np.int32)), 4))
        assert rows.tolist() == [[2, 0, 1, 3], [0, 2, 1, 3]]

    def matrix_exp(B):
        import scipy.linalg
        for scale in (0.1, 5.0, 40.0):  # no scaling, and 2^s scalings of different s in one batch
            m = x64(3, 4, 4) * np.array([scale, 1.0, 0.01])[:, None, None]
            close(B, B.matrix_exp(dev(B, m)), scipy.linalg.expm(m), rtol=1e-10, atol=1e-12)
        nan = host(B, B.matrix_exp(dev(B, np.array([[[np.nan, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]]))))
        assert np.isnan(nan[0]).all() and np.allclose(nan[1], np.eye(2), rtol=0, atol=1e-15)
    return {"inv": inv, "inv_unchecked": inv_unchecked, "solve": solve, "solve_triangular": solve_triangular,
            "slogdet": slogdet, "det": det, "lu_factor": lu_factor, "lu_permutation": lu_permutation,
            "matrix_exp": matrix_exp}


def factorization_cases() -> dict[str, Callable[[Backend], None]]:
    a = x64(2, 5, 3)

    def cholesky(B):
        s = spd(4, 3)
        close(B, B.cholesky(dev(B, s)), np.linalg.cholesky(s), rtol=1e-10, atol=1e-12)

    def cholesky_ex(B):
        s = spd(4, 3)
        L, info = B.cholesky_ex(dev(B, s))
        close(B, L, np.linalg.cholesky(s), rtol=1e-10, atol=1e-12)
        assert host(B, info).tolist() == [0, 0, 0]
        s[1, 2, 2] = -100.0  # the leading minor of order 3 fails; potf2 leaves the failed pivot there
        L, info = (host(B, r) for r in B.cholesky_ex(dev(B, s)))
        assert info.tolist() == [0, 3, 0]
        good = np.linalg.cholesky(s[1, :2, :2])
        np.testing.assert_allclose(L[1, :2, :2], good, atol=1e-12)
        np.testing.assert_allclose(L[1, 2, 2], s[1, 2, 2] - (np.linalg.solve(good, s[1, :2, 2]) ** 2).sum())
        np.testing.assert_allclose(L[1, 3, 2:], s[1, 3, 2:])
        np.testing.assert_allclose(L[[0, 2]], np.linalg.cholesky(s[[0, 2]]), atol=1e-12)

    def eigh(B):
        m = x64(3, 4, 4)  # not symmetric: only the triangle asked for is read
        for lower, uplo in ((True, "L"), (False, "U")):
            w, v = B.eigh(dev(B, m), lower)
            ref = np.linalg.eigvalsh(m, uplo)
            close(B, w, ref, rtol=1e-10, atol=1e-12)
            sym = np.tril(m) + np.tril(m, -1).swapaxes(-1, -2) if lower else np.triu(m) + np.triu(m, 1).swapaxes(-1, -2)
            vv = host(B, v)
            np.testing.assert_allclose((vv * ref[..., None, :]) @ vv.swapaxes(-1, -2), sym, atol=1e-10)

    def svd(B):
        for full, (mu, nv) in ((True, (5, 3)), (False, (3, 3))):
            u, s, vh = (host(B, f) for f in B.svd(dev(B, a), full))
            assert u.shape == (2, 5, mu) and vh.shape == (2, nv, 3)
            np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-10)
            np.testing.assert_allclose((u[..., :3] * s[..., None, :]) @ vh[..., :3, :], a, atol=1e-10)

    def svdvals(B):
        close(B, B.svdvals(dev(B, a.swapaxes(-1, -2))), np.linalg.svd(a, compute_uv=False), rtol=1e-10)

    def qr(B):
        for mode, k in (("reduced", 3), ("complete", 5)):
            q, r = (host(B, f) for f in B.qr(dev(B, a), mode))
            assert q.shape == (2, 5, k) and r.shape == (2, k, 3)
            np.testing.assert_allclose(q @ r, a, atol=1e-10)
            np.testing.assert_allclose(np.triu(r), r)
            np.testing.assert_allclose(q.swapaxes(-1, -2) @ q, np.broadcast_to(np.eye(k), (2, k, k)), atol=1e-10)
        close(B, np.abs(host(B, B.qr(dev(B, a), "r")[1])), np.abs(np.linalg.qr(a, mode="r")), rtol=1e-10)
    def geqrf(B):
        for shape in ((2, 5, 3), (2, 3, 4)):
            m = x64(*shape)
            h, tau = (host(B, r) for r in B.geqrf(dev(B, m)))
            k = min(shape[-2:])
            assert h.shape == shape and tau.shape == (2, k)
            q = np.broadcast_to(np.eye(shape[-2]), (2, shape[-2], shape[-2])).copy()
            for i in reversed(range(k)):  # Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^T
                v = np.concatenate([np.zeros((2, i)), np.ones((2, 1)), h[:, i + 1:, i]], -1)[..., None]
                q = q - tau[:, i, None, None] * (v @ (np.swapaxes(v, -1, -2) @ q))
            np.testing.assert_allclose(q @ np.triu(h), m, atol=1e-12)

    return {"cholesky": cholesky, "cholesky_ex": cholesky_ex, "geqrf": geqrf, "eigh": eigh, "svd": svd,
            "svdvals": svdvals, "qr": qr}


# -------------------------------------------------------------------------------------- activations
def erf_ref(x):
    return np.vectorize(math.erf)(x)


def gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def softplus_ref(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def activation_cases() -> dict[str, Callable[[Backend], None]]:
    """Forward vs a float64 formula; backward vs the numerical VJP of that formula."""
    x = x64(3, 5)
    x[np.abs(x) < 0.05] = 0.3  # keep away from the kinks at 0
    x[np.abs(np.abs(x) - 1) < 0.05] = 0.5
    gy = x64(3, 5)

    # name -> (forward params, reference, which array backward takes: "y" or "x", backward-only params)
    table = {
        "relu": ({}, lambda v: np.maximum(v, 0), "y", {}),
        "sigmoid": ({}, lambda v: 1 / (1 + np.exp(-v)), "y", {}),
        "tanh": ({}, np.tanh, "y", {}),
        "leaky_relu": ({"negative_slope": 0.1}, lambda v: np.where(v > 0, v, 0.1 * v), "y", {}),
        "elu": ({"alpha": 1.3}, lambda v: np.where(v > 0, v, 1.3 * np.expm1(v)), "y", {"is_result": True}),
        "gelu": ({"approximate": "none"}, lambda v: 0.5 * v * (1 + erf_ref(v / math.sqrt(2))), "x", {}),
        "silu": ({}, lambda v: v / (1 + np.exp(-v)), "x", {}),
        "softplus": ({"beta": 2.0, "threshold": 3.0}, lambda v: softplus_ref(v, 2.0, 3.0), "x", {}),
        "hardtanh": ({"min_val": -1.0, "max_val": 1.0}, lambda v: np.clip(v, -1, 1), "y", {}),
        "softmax": ({"axis": 1}, lambda v: softmax_ref(v, 1), "y", {}),
        "log_softmax": ({"axis": 0}, lambda v: np.log(softmax_ref(v, 0)), "y", {}),
        "celu": ({"alpha": -0.7}, lambda v: np.where(v > 0, v, -0.7 * np.expm1(v / -0.7)), "x", {}),
        "selu": ({}, lambda v: SELU[1] * np.where(v > 0, v, SELU[0] * np.expm1(v)), "x", {}),
        "mish": ({}, lambda v: v * np.tanh(np.log1p(np.exp(v))), "x", {}),
        "hardsigmoid": ({}, lambda v: np.clip(v + 3, 0, 6) / 6, "x", {}),
        "hardswish": ({}, lambda v: v * np.clip(v + 3, 0, 6) / 6, "x", {}),
        "logsigmoid": ({}, lambda v: -np.log1p(np.exp(-v)), "x", {}),
        "softsign": ({}, lambda v: v / (1 + np.abs(v)), "x", {}),
    }
    cases: dict[str, Callable[[Backend], None]] = {}
    for name, (params, ref, saved, bparams) in table.items():
        def forward(B, name=name, params=params, ref=ref):
            close(B, getattr(B, name)(dev(B, x), **params), ref(x), rtol=1e-10, atol=1e-12)
            assert host(B, getattr(B, name)(dev(B, x.astype(np.float32)), **params)).dtype == np.float32

        def backward(B, name=name, params=params, ref=ref, saved=saved, bparams=bparams):
            y = getattr(B, name)(dev(B, x), **params)
            arg = y if saved == "y" else dev(B, x)
            got = getattr(B, name + "_backward")(dev(B, gy), arg, **params, **bparams)
            close(B, got, numeric_vjp(ref, x, gy), rtol=1e-6, atol=1e-7)

        cases[name], cases[name + "_backward"] = forward, backward

    def gelu_tanh(B):
        close(B, B.gelu(dev(B, x), "tanh"), gelu_tanh_ref(x), rtol=1e-10, atol=1e-12)
        close(B, B.gelu_backward(dev(B, gy), dev(B, x), "tanh"), numeric_vjp(gelu_tanh_ref, x, gy),
              rtol=1e-6, atol=1e-7)

    def erf(B):
        data = np.linspace(-5, 5, 101)
        close(B, B.erf(dev(B, data)), erf_ref(data), rtol=1e-14, atol=1e-15)

    def gelu(B, exact=cases["gelu"]):
        exact(B)
        gelu_tanh(B)

    cases["gelu"], cases["erf"] = gelu, erf
    return cases


# ------------------------------------------------------------- families checked in their own suites
POINTERS = {
    "conv2d": "ops/test_conv.py::test_conv2d_backend_matches_loops",
    "conv2d_backward": "ops/test_conv.py::test_conv2d_backward_is_the_transpose_of_forward",
    "conv_transpose2d": "ops/test_conv.py::test_conv_transpose2d_matches_loops",
    "conv_transpose2d_backward": "ops/test_conv.py::test_conv_transpose2d_gradcheck",
    "im2col": "ops/test_conv.py::test_conv_index_hooks_match_loops",
    "col2im": "ops/test_conv.py::test_conv_index_hooks_match_loops",
    "max_pool2d": "ops/test_pooling.py::test_max_pool_values_and_indices_match_pytorch_rules",
    "max_pool2d_backward": "ops/test_pooling.py::test_max_pool_backward_scatters_to_the_indices",
    "max_pool2d_indices": "ops/test_pooling.py::test_max_pool_cpu_paths_match_pytorch_rules",
    "avg_pool2d": "ops/test_pooling.py::test_avg_pool_matches_pytorch_divisors",
    "avg_pool2d_backward": "ops/test_pooling.py::test_avg_pool_gradcheck",
    "adaptive_avg_pool2d": "ops/test_pooling.py::test_adaptive_avg_pool_matches_loops",
    "adaptive_avg_pool2d_backward": "ops/test_pooling.py::test_adaptive_avg_pool_gradcheck",
    "axis_stencil": "ops/test_stencil_nonfinite.py::test_axis_stencil_matches_loops",
    "axis_stencil_backward": "ops/test_stencil_nonfinite.py::test_axis_stencil_matches_loops",
    "adaptive_max_pool2d": "ops/test_adaptive_max_pool.py::test_backend_adaptive_max_pool_matches_loops",
    "adaptive_max_pool3d": "ops/test_adaptive_max_pool3d.py::test_backend_adaptive_max_pool3d_matches_loops",
    "fractional_max_pool2d": "ops/test_fractional_max_pool.py::test_values_and_indices_match_loops",
    "fractional_max_pool3d": "ops/test_fractional_max_pool.py::test_values_and_indices_match_loops",
    "batch_norm_forward": "ops/test_normalization.py::test_batch_norm_training_forward_and_running_stats_over_steps",
    "batch_norm_backward": "ops/test_normalization.py::test_batch_norm_gradients",
    "layer_norm_forward": "ops/test_normalization.py::test_layer_norm_forward_and_gradients",
    "layer_norm_backward": "ops/test_normalization.py::test_layer_norm_forward_and_gradients",
    "softmax_cross_entropy": "ops/test_loss.py::test_cross_entropy_matches_pytorch_definition",
    "softmax_cross_entropy_backward": "ops/test_loss.py::test_cross_entropy_gradients",
    "softmax_cross_entropy_probs": "ops/test_loss.py::test_cross_entropy_with_probability_targets",
    "softmax_cross_entropy_probs_backward": "ops/test_loss.py::test_cross_entropy_with_probability_targets",
    "class_target_weights": "ops/test_loss.py::test_cross_entropy_matches_pytorch_definition",
    "nll_loss": "ops/test_loss.py::test_nll_loss_forward_and_gradient",
    "ctc_loss": "ops/test_ctc.py::test_matches_brute_force_enumeration",
    "ctc_loss_backward": "ops/test_ctc.py::test_matches_brute_force_enumeration",
    "nll_loss_backward": "ops/test_loss.py::test_nll_loss_forward_and_gradient",
    "binary_cross_entropy": "ops/test_loss.py::test_binary_cross_entropy",
    "binary_cross_entropy_backward": "ops/test_loss.py::test_binary_cross_entropy",
    "bce_with_logits": "ops/test_loss.py::test_binary_cross_entropy_with_logits",
    "bce_with_logits_backward": "ops/test_loss.py::test_binary_cross_entropy_with_logits",
    "mse_loss": "ops/test_loss.py::test_regression_losses",
    "mse_loss_backward": "ops/test_loss.py::test_regression_losses",
    "l1_loss": "ops/test_loss.py::test_regression_losses",
    "l1_loss_backward": "ops/test_loss.py::test_regression_losses",
    "smooth_l1_loss": "ops/test_loss.py::test_regression_losses",
    "smooth_l1_loss_backward": "ops/test_loss.py::test_regression_losses",
    "huber_loss": "ops/test_loss.py::test_regression_losses",
    "huber_loss_backward": "ops/test_loss.py::test_regression_losses",
    "dropout": "ops/test_dropout_embedding.py::test_dropout_mask_statistics_and_scaling",
    "dropout_backward": "ops/test_dropout_embedding.py::test_dropout_gradient_is_the_same_mask_and_scale",
    "embedding": "ops/test_dropout_embedding.py::test_embedding_forward_and_scatter_add_gradient",
    "embedding_backward": "ops/test_dropout_embedding.py::test_embedding_forward_and_scatter_add_gradient",
    "embedding_sparse_backward":
        "test_embedding_sparse.py::test_sparse_gradient_is_one_entry_per_lookup_and_sums_to_the_dense_one",
    "embedding_bag_forward": "test_embedding_bag.py::test_forward_and_gradients_match_the_loop_reference",
    "embedding_bag_backward": "test_embedding_bag.py::test_forward_and_gradients_match_the_loop_reference",
    "embedding_bag_per_sample_weights_backward":
        "test_embedding_bag.py::test_forward_and_gradients_match_the_loop_reference",
    "sgd_update": "test_optim.py::test_sgd_trajectory",
    "adam_update": "test_optim.py::test_adam_and_adamw_trajectory",
    "rmsprop_update": "test_optim.py::test_rmsprop_trajectory",
    "adagrad_update": "test_optim.py::test_adagrad_trajectory",
    "adadelta_update": "test_optim_variants.py::test_adadelta_trajectory",
    "adamax_update": "test_optim_variants.py::test_adamax_trajectory",
    "nadam_update": "test_optim_variants.py::test_nadam_trajectory",
    "radam_update": "test_optim_variants.py::test_radam_trajectory",
    "asgd_update": "test_optim_variants.py::test_asgd_trajectory_and_average",
    "rprop_update": "test_optim_rprop_sparse_adam.py::test_rprop_trajectory",
    "sparse_adam_update": "test_optim_rprop_sparse_adam.py::test_sparse_adam_trajectory",
    "standard_gamma": "test_distributions_gamma.py::test_samples_follow_the_law",
    "standard_gamma_grad": "test_distributions_gamma.py::test_implicit_gamma_gradient_is_the_inverse_cdf_derivative",
    "bessel": "test_special_bessel_zeta.py::test_bessel_functions_against_float64_references",
    "zeta": "test_special_bessel_zeta.py::test_zeta_against_euler_maclaurin",
}

# The sparse family (tests/test_sparse.py checks each against dense NumPy float64 references).
POINTERS.update({
    "sparse_coalesce": "test_sparse.py::test_to_dense_coalesce_and_mm_match_dense_numpy",
    "sparse_to_dense": "test_sparse.py::test_to_dense_coalesce_and_mm_match_dense_numpy",
    "sparse_mm": "test_sparse.py::test_to_dense_coalesce_and_mm_match_dense_numpy",
    "dense_to_sparse": "test_sparse.py::test_to_sparse_keeps_the_nonzeros_in_order",
    "sparse_values_at": "test_sparse.py::test_gradcheck_dense_operand_and_values",
    "sparse_mm_values_grad": "test_sparse.py::test_gradcheck_dense_operand_and_values",
    "sparse_sum": "test_sparse.py::test_sparse_sum_over_every_dim_and_some",
    "sparse_sum_rows": "test_sparse.py::test_sum_over_any_dims_matches_dense_numpy",
    "sparse_cat": "test_sparse.py::test_add_and_sub_match_dense_numpy",
    "sparse_add_dense": "test_sparse.py::test_add_and_sub_match_dense_numpy",
    "sparse_match": "test_sparse.py::test_mul_div_pow_neg_match_dense_numpy",
    "sparse_permute": "test_sparse.py::test_transpose_t_and_permute_of_sparse_tensors",
    "sparse_spgemm": "test_sparse.py::test_products_with_a_sparse_operand_match_dense_numpy",
    "sparse_mm_pairs": "test_sparse.py::test_gradients_of_sparse_ops_match_finite_differences",
    "sparse_spgemm_grads": "test_sparse.py::test_gradients_of_sparse_ops_match_finite_differences",
})

# The LSTM recurrence (tests/test_lstm_sequence.py checks both against a float64 NumPy BPTT reference).
POINTERS.update({
    "lstm_forward": "test_lstm_sequence.py::test_forward_and_backward_match_the_float64_reference",
    "attention_softmax": "cpu/test_cpu_attention_kernels.py::test_forward_and_backward_match_float64",
    "attention_softmax_backward": "cpu/test_cpu_attention_kernels.py::test_forward_and_backward_match_float64",
    "lstm_backward": "test_lstm_sequence.py::test_forward_and_backward_match_the_float64_reference",
})


def searching_cases() -> dict[str, Callable[[Backend], None]]:
    ints = rng.integers(0, 4, (5, 3, 2))

    def unique(B):
        values, inverse, counts = B.unique(dev(B, ints), None, False)
        ref, ref_inverse, ref_counts = np.unique(ints, return_inverse=True, return_counts=True)
        for got, want in ((values, ref), (inverse, ref_inverse.reshape(ints.shape)), (counts, ref_counts)):
            assert np.array_equal(host(B, got), want)
        values, inverse, counts = B.unique(dev(B, ints), 1, False)  # slices along axis 1, lexicographic
        ref, ref_inverse, ref_counts = np.unique(ints, return_inverse=True, return_counts=True, axis=1)
        for got, want in ((values, ref), (inverse, ref_inverse.reshape(-1)), (counts, ref_counts)):
            assert np.array_equal(host(B, got), want)
        runs = np.array([2.0, 2.0, np.nan, np.nan, 1.0, 2.0])  # consecutive runs; every nan is its own value
        values, inverse, counts = B.unique(dev(B, runs), None, True)
        np.testing.assert_array_equal(host(B, values), [2.0, np.nan, np.nan, 1.0, 2.0])
        assert host(B, inverse).tolist() == [0, 0, 1, 2, 3, 4] and host(B, counts).tolist() == [2, 1, 1, 1, 1]

    def searchsorted(B):
        seq = np.sort(x64(3, 6), axis=1)
        values = x64(3, 4)
        for right in (False, True):
            ref = np.stack([np.searchsorted(s, v, "right" if right else "left") for s, v in zip(seq, values)])
            assert np.array_equal(host(B, B.searchsorted(dev(B, seq), dev(B, values), right, None)), ref)
            flat = np.searchsorted(seq[0], values, "right" if right else "left")
            assert np.array_equal(host(B, B.searchsorted(dev(B, seq[0]), dev(B, values), right, None)), flat)
        stored = rng.permuted(seq, axis=1)  # unsorted rows, and the order that sorts them
        got = B.searchsorted(dev(B, stored), dev(B, values), False, dev(B, np.argsort(stored, axis=1)))
        ref = np.stack([np.searchsorted(s, v) for s, v in zip(seq, values)])
        assert np.array_equal(host(B, got), ref)

    def bincount(B):
        idx = rng.integers(0, 5, 20)
        w = x64(20)
        assert np.array_equal(host(B, B.bincount(dev(B, idx), None, 0)), np.bincount(idx))
        assert np.array_equal(host(B, B.bincount(dev(B, idx), None, 9)), np.bincount(idx, minlength=9))
        close(B, B.bincount(dev(B, idx), dev(B, w), 7), np.bincount(idx, w, minlength=7))
        assert host(B, B.bincount(dev(B, idx), dev(B, w.astype(np.float32)), 0)).dtype == np.float32

    def histc(B):
        data = np.array([-1.0, 0.0, 0.1, 0.5, 0.99, 1.0, 2.0, np.nan])
        got = host(B, B.histc(dev(B, data), 4, 0.0, 1.0))
        assert got.dtype == np.float64 and got.tolist() == [2.0, 0.0, 1.0, 2.0]  # 1.0 falls in the last bin
        v = x64(50)
        close(B, B.histc(dev(B, v), 7, -1.0, 1.0), np.histogram(v, 7, (-1.0, 1.0))[0])

    def isin(B):
        a, t = rng.integers(0, 9, (3, 4)), rng.integers(0, 9, 5)
        for invert in (False, True):
            assert np.array_equal(host(B, B.isin(dev(B, a), dev(B, t), invert)), np.isin(a, t, invert=invert))
        nan = np.array([np.nan, 1.0])
        assert host(B, B.isin(dev(B, nan), dev(B, nan), False)).tolist() == [False, True]

    return {"unique": unique, "searchsorted": searchsorted, "bincount": bincount, "histc": histc, "isin": isin}


def amp_unscale_case(B: Backend) -> None:
    """Gradients of three dtypes unscaled in place (float16 in float32, rounded once) and found_inf a 0-d
    float32 array: 0 while every value is finite, 1 with one inf or NaN anywhere (tested before scaling)."""
    values = [x64(3, 4) * 1024, x64(7) * 1024, x64(2, 2, 5) * 1024]
    dtypes = [np.float16, np.float32, np.float64]
    grads = [dev(B, v.astype(d)) for v, d in zip(values, dtypes)]
    found = B.amp_unscale_and_check_inf(grads, 1 / 1024)
    assert host(B, found).shape == () and host(B, found).dtype == np.float32 and host(B, found) == 0
    for g, v, d in zip(grads, values, dtypes):
        assert host(B, g).dtype == d
        want = (v.astype(d).astype(np.float64) / 1024).astype(d)  # exact: 1/1024 is a power of two
        close(B, g, want, rtol=0, atol=0)
    for bad in (np.inf, -np.inf, np.nan):
        grads = [dev(B, v.astype(d)) for v, d in zip(values, dtypes)]
        poisoned = host(B, grads[1])
        poisoned[4] = bad
        grads[1] = dev(B, poisoned)
        assert host(B, B.amp_unscale_and_check_inf(grads, 0.5)) == 1
    assert host(B, B.amp_unscale_and_check_inf([], 0.5)) == 0


# ------------------------------------------------------------------------ special functions, nan_to_num
EULER_GAMMA = 0.5772156649015329


def bessel_series(x: np.ndarray, order: int) -> np.ndarray:
    """I_order(x) for order 0 or 1 from its power series, sum (x/2)^(2k+order) / (k! (k+order)!)."""
    k = np.arange(60.0)
    log_fact = np.vectorize(math.lgamma)
    log_half = np.log(np.abs(x[..., None]) / 2 + 1e-300)
    terms = np.exp((2 * k + order) * log_half - log_fact(k + 1) - log_fact(k + 1 + order))
    return np.sign(x) ** order * terms.sum(-1)


def special_cases() -> dict[str, Callable[[Backend], None]]:
    x = np.concatenate([np.linspace(0.05, 12, 23), -np.linspace(0.3, 4.7, 9) + 0.011])  # no poles

    def keeps_16_bit(B, name, *args):
        for dt in (np.float16, np.float32):
            assert host(B, getattr(B, name)(*args, dev(B, x[:4].astype(dt)))).dtype == dt

    def lgamma(B):
        close(B, B.lgamma(dev(B, x)), np.vectorize(math.lgamma)(x), rtol=1e-12)
        edges = host(B, B.lgamma(dev(B, np.array([0.0, -1.0, -2.0, np.inf, -np.inf]))))
        assert (edges == np.inf).all()  # poles and both infinities: C's lgamma, as PyTorch
        keeps_16_bit(B, "lgamma")

    def digamma(B):  # psi(x + 1) = psi(x) + 1 / x, psi(1) = -gamma, psi(1/2) = -gamma - 2 log 2
        close(B, B.digamma(dev(B, x + 1)) - B.digamma(dev(B, x)), 1 / x, rtol=1e-11, atol=1e-12)
        close(B, B.digamma(dev(B, np.array([1.0, 0.5]))), [-EULER_GAMMA, -EULER_GAMMA - 2 * math.log(2)])
        edges = host(B, B.digamma(dev(B, np.array([0.0, -0.0, -1.0]))))
        assert edges[0] == -np.inf and edges[1] == np.inf and np.isnan(edges[2])
        keeps_16_bit(B, "digamma")

    def polygamma(B):  # psi_n(x + 1) = psi_n(x) + (-1)^n n! / x^(n+1); psi_1(1) = pi^2/6, psi_2(1) = -2 zeta(3)
        for n in (1, 2, 3):
            step = (-1) ** n * math.factorial(n) / x ** (n + 1)
            close(B, B.polygamma(n, dev(B, x + 1)) - B.polygamma(n, dev(B, x)), step, rtol=1e-9, atol=1e-9)
        close(B, B.polygamma(0, dev(B, x)), host(B, B.digamma(dev(B, x))))
        ones = dev(B, np.ones(2))
        close(B, B.polygamma(1, ones), [math.pi ** 2 / 6] * 2)
        close(B, B.polygamma(2, ones), [-2.4041138063191885] * 2)
        close(B, B.polygamma(3, ones), [math.pi ** 4 / 15] * 2)
        keeps_16_bit(B, "polygamma", 2)

    def bessel(name, order):
        def case(B):
            data = np.linspace(-9, 9, 37)
            close(B, getattr(B, name)(dev(B, data)), bessel_series(data, order), rtol=1e-12)
            keeps_16_bit(B, name)
        return case

    def sinc(B):
        data = np.array([0.0, 1e-20, 0.5, -1.5, 2.0, 7.3, np.inf])
        with np.errstate(invalid="ignore"):
            ref = np.where(data == 0, 1.0, np.sin(np.pi * data) / (np.pi * np.where(data == 0, 1, data)))
        got = host(B, B.sinc(dev(B, data)))
        np.testing.assert_allclose(got[:-1], ref[:-1], rtol=1e-12, atol=1e-15)
        assert np.isnan(got[-1])
        keeps_16_bit(B, "sinc")

    def xlogy(B):
        a = np.array([0.0, 0.0, 0.0, 2.0, -1.5, 3.0, 0.0, 1.0])
        b = np.array([0.0, np.nan, -1.0, 3.0, 0.5, np.inf, np.inf, 0.0])
        got = host(B, B.xlogy(dev(B, a), dev(B, b)))
        expected = [0.0, np.nan, 0.0, 2 * math.log(3), -1.5 * math.log(0.5), np.inf, 0.0, -np.inf]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        close(B, np.nan_to_num(got), np.nan_to_num(expected))
        close(B, B.xlogy(2.0, dev(B, x[:4] + 1)), 2 * np.log(x[:4] + 1))  # a Python number on either side
        scalar_y = host(B, B.xlogy(dev(B, x[:4].astype(np.float32)), 2.5))
        assert scalar_y.dtype == np.float32
        close(B, scalar_y, x[:4].astype(np.float32) * math.log(2.5), rtol=1e-6)

    def scaled(name):
        """exp(-|x|) I_n(x) from the series, and the erfc / normal-CDF functions from math's erfc, in float64."""
        def case(B):
            data = np.linspace(-9, 9, 37) if name in ("i0e", "i1e") else np.linspace(-6, 6, 25)
            if name in ("i0e", "i1e"):
                ref = np.exp(-np.abs(data)) * bessel_series(data, int(name[1]))
            elif name == "erfcx":
                ref = np.array([math.exp(v * v) * math.erfc(v) for v in data])
            else:  # log_ndtr: log Phi(x) = log(erfc(-x / sqrt 2) / 2)
                ref = np.array([math.log(math.erfc(-v / math.sqrt(2)) / 2) for v in data])
            close(B, getattr(B, name)(dev(B, data)), ref, rtol=1e-12)
            keeps_16_bit(B, name)
        return case

    def xlog1py(B):
        a = np.array([0.0, 0.0, 2.0, -1.5, 3.0])
        b = np.array([0.0, np.nan, 3.0, -0.5, -1.0])
        got = host(B, B.xlog1py(dev(B, a), dev(B, b)))
        expected = [0.0, np.nan, 2 * math.log(4), -1.5 * math.log(0.5), -np.inf]
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        close(B, np.nan_to_num(got), np.nan_to_num(expected))

    def nan_to_num(B):
        data = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
        close(B, B.nan_to_num(dev(B, data), 0.5, 7.0, -8.0), [0.5, 7.0, -8.0, 1.5, 0.0])
        for dt in (np.float16, np.dtype("bfloat16")):  # bfloat16 is no NumPy inexact type: its own path
            got = host(B, B.nan_to_num(dev(B, data.astype(dt)), 0.0, 1e10, -2.0))
            assert got.dtype == dt
            with np.errstate(over="ignore"):  # past float16's range: inf
                expected = np.asarray([0.0, 1e10, -2.0, 1.5, 0.0], np.float32).astype(dt)
            np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))

    def incomplete_gamma(B):  # P(1, x) = 1 - exp(-x), P(1/2, x) = erf(sqrt x), P + Q = 1
        z = np.abs(x) + 0.01
        ones, halves = dev(B, np.ones_like(z)), dev(B, np.full_like(z, 0.5))
        close(B, B.gammainc(ones, dev(B, z)), -np.expm1(-z), rtol=1e-12)
        close(B, B.gammainc(halves, dev(B, z)), [math.erf(math.sqrt(v)) for v in z], rtol=1e-12)
        close(B, B.gammaincc(ones, dev(B, z)), np.exp(-z), rtol=1e-12)
        a = dev(B, z[::-1].copy())
        close(B, B.gammainc(a, dev(B, z)) + B.gammaincc(a, dev(B, z)), np.ones_like(z), rtol=1e-12)
        for dt in (np.float16, np.float32):
            assert host(B, B.gammainc(dev(B, z[:4].astype(dt)), dev(B, z[:4].astype(dt)))).dtype == dt

    return {"gammainc": incomplete_gamma, "gammaincc": incomplete_gamma,
            "lgamma": lgamma, "digamma": digamma, "polygamma": polygamma, "i0": bessel("i0", 0),
            "i1": bessel("i1", 1), "sinc": sinc, "xlogy": xlogy, "nan_to_num": nan_to_num,
            "i0e": scaled("i0e"), "i1e": scaled("i1e"), "erfcx": scaled("erfcx"), "log_ndtr": scaled("log_ndtr"),
            "xlog1py": xlog1py}


PARITY: dict[str, Any] = {
    "is_available": identity_cases, "device_count": identity_cases, "synchronize": identity_cases,
    "unavailable_reason": identity_cases,
    **array_cases(), **random_cases(), **elementwise_cases(), **comparison_cases(), **reduce_cases(), **shape_cases(),
    **linalg_cases(), **activation_cases(), **POINTERS,
    **solve_cases(), **factorization_cases(),
    **rearrange_cases(),
    **searching_cases(),
    "amp_unscale_and_check_inf": amp_unscale_case,
}
PARITY.update(special_cases())


def test_every_backend_method_has_a_parity_case():
    methods = public_methods(Backend)
    missing = methods - set(PARITY) - PENDING
    stale = (set(PARITY) | PENDING) - methods
    assert not missing, f"Backend methods without a parity case in {Path(__file__).name}: {sorted(missing)}"
    assert not stale, f"parity cases for methods Backend no longer has: {sorted(stale)}"


def test_the_contract_check_sees_new_methods():
    class Grown(Backend):
        def fancy_new_op(self, x):
            return x

    assert public_methods(Grown) - set(PARITY) == {"fancy_new_op"}


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {n for n in names if n.startswith("test_")}


@pytest.mark.parametrize("name", sorted(POINTERS))
def test_pointed_parity_tests_exist(name):
    module, _, test = POINTERS[name].partition("::")
    path = TESTS / module
    assert path.exists(), f"{name}: parity test module {module} is missing"
    assert test in defined_tests(path), f"{name}: {module} has no {test}; update POINTERS"


@pytest.mark.parametrize("name", sorted(n for n, case in PARITY.items() if callable(case)))
def test_parity(name, device):
    PARITY[name](device.backend)
