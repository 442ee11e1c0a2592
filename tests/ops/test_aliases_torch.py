"""The names of test_aliases.py and test_elementwise_added.py side by side with PyTorch (skipped where torch
is absent): each name is where PyTorch has it (``torch.<name>`` and / or ``Tensor.<name>``), and the ops
give PyTorch's values, dtypes and gradients on grids of corner values (zeros, infinities, nans)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import minitensor as mt
from minitensor.functional.aliases import METHODS

pytestmark = pytest.mark.torch
NAN, INF = math.nan, math.inf
CORNERS = [0.0, -0.0, 1.0, -1.0, 2.5, -3.5, 1e-30, NAN, INF, -INF]

ADDED = sorted({
    "absolute", "absolute_", "divide", "divide_", "multiply", "multiply_", "subtract", "subtract_", "negative",
    "negative_", "positive", "greater", "greater_", "greater_equal", "greater_equal_", "less", "less_",
    "less_equal", "less_equal_", "not_equal", "not_equal_", "true_divide", "true_divide_", "floor_divide",
    "floor_divide_", "clip_", "sgn", "sgn_", "rsub", "fix_", "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "deg2rad",
    "deg2rad_", "rad2deg", "rad2deg_", "fmax", "fmin", "gcd", "gcd_", "lcm", "lcm_", "ldexp", "ldexp_", "frexp",
    "nextafter", "nextafter_", "isposinf", "isneginf", "isreal", "igamma", "igamma_", "igammac", "igammac_",
    "mvlgamma", "mvlgamma_", "is_signed", "is_nonzero", "is_same_size", "get_device", "ndimension",
    "retains_grad", "byte", "char", "short", "fill", "hardshrink", "threshold", "threshold_", "selu", "selu_",
    "celu", "celu_", "rrelu", "rrelu_", "prelu", "renorm", "renorm_", *METHODS})


@pytest.mark.parametrize("name", ADDED)
def test_the_name_is_where_pytorch_has_it(name):
    torch = pytest.importorskip("torch")
    assert (hasattr(mt, name), hasattr(mt.Tensor, name)) == (hasattr(torch, name), hasattr(torch.Tensor, name))


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "multigammaln"])
def test_special_names_are_pytorchs(name):
    torch = pytest.importorskip("torch")
    assert hasattr(torch.special, name) and hasattr(mt.special, name)


def grid(*columns):
    return [np.array(c) for c in zip(*itertools.product(*columns))]


def run(lib, fn, arrays, dtypes, grad):
    inputs = [lib.tensor(a, dtype=getattr(lib, d), requires_grad=grad and d.startswith("float"))
              for a, d in zip(arrays, dtypes)]
    out = fn(lib, *inputs)
    out = out[0] if isinstance(out, tuple) else out
    values = out.detach().double().numpy()
    grads = []
    if grad:
        out.sum().backward()
        grads = [None if x.grad is None else np.zeros(x.shape) if getattr(x.grad, "_is_zerotensor", bool)()
                 else x.grad.numpy() for x in inputs]  # sign's gradient is one of torch's ZeroTensors
    return str(out.dtype).split(".")[-1], values, grads


OPS = [  # (name, fn(lib, *tensors), the inputs' dtypes, columns of the grid, differentiable)
    ("deg2rad", lambda lib, x: lib.deg2rad(x), ("float32",), (CORNERS,), True),
    ("rad2deg_int", lambda lib, x: lib.rad2deg(x), ("int64",), ([0, -3, 7],), False),
    ("fmax", lambda lib, a, b: lib.fmax(a, b), ("float64", "float64"), (CORNERS, CORNERS), True),
    ("fmin", lambda lib, a, b: lib.fmin(a, b), ("float64", "float32"), (CORNERS, CORNERS), True),
    ("fmax_int", lambda lib, a, b: a.fmax(b), ("int64", "float32"), ([0, -3, 7], CORNERS), False),
    ("gcd", lambda lib, a, b: lib.gcd(a, b), ("int64", "int32"), ([0, -12, 18, 7], [0, 8, -27, 7]), False),
    ("lcm", lambda lib, a, b: a.lcm(b), ("int32", "int16"), ([0, -12, 18, 7], [0, 8, -27, 7]), False),
    ("ldexp", lambda lib, a, b: lib.ldexp(a, b), ("float64", "int64"), (CORNERS, [0, 3, 1]), True),
    ("ldexp_float", lambda lib, a, b: lib.ldexp(a, b), ("float32", "float64"), (CORNERS, [0, 3, -2, 0.5]), True),
    ("ldexp_int", lambda lib, a, b: lib.ldexp(a, b), ("int64", "int32"), ([0, 3, -2], [0, 3, -2]), False),
    ("ldexp_0d", lambda lib, a, b: lib.ldexp(a[0], b), ("float64", "int64"), ([1.3], [1, 2]), False),
    ("frexp", lambda lib, x: lib.frexp(x), ("float32",), (CORNERS + [3e38, 1e-40],), True),
    ("frexp_exponent", lambda lib, x: x.frexp().exponent, ("float64",), (CORNERS + [1e308, 5e-324],), False),
    ("nextafter", lambda lib, a, b: lib.nextafter(a, b), ("float32", "float64"), (CORNERS, CORNERS), False),
    ("isposinf", lambda lib, x: lib.isposinf(x), ("float32",), (CORNERS,), False),
    ("isneginf", lambda lib, x: x.isneginf(), ("float16",), (CORNERS,), False),
    ("isreal", lambda lib, x: lib.isreal(x), ("float64",), (CORNERS,), False),
    ("igamma", lambda lib, a, x: lib.igamma(a.detach(), x), ("float64", "float64"),
     ([0.5, 1.0, 3.0, 0.0, INF, NAN], [0.0, 0.5, 2.0, 10.0, INF, NAN]), True),
    ("igammac", lambda lib, a, x: a.detach().igammac(x), ("float32", "float32"),
     ([0.5, 1.0, 3.0, 0.0, INF], [0.0, 0.5, 2.0, 10.0, INF]), True),
    ("mvlgamma", lambda lib, x: lib.mvlgamma(x, 3), ("float64",), ([1.1, 2.5, 7.0, INF, NAN, 0.5, -1.0],), True),
    ("sgn", lambda lib, x: lib.sgn(x), ("float32",), (CORNERS,), True),
    ("rsub", lambda lib, a, b: lib.rsub(a, b, alpha=2), ("float64", "float64"), (CORNERS, CORNERS), True),
    ("divide_floor", lambda lib, a, b: lib.divide(a, b, rounding_mode="floor"), ("float64", "float64"),
     (CORNERS, CORNERS), False),
    ("eq_", lambda lib, a, b: a.detach().clone().eq_(b), ("float32", "float32"), (CORNERS, CORNERS), False),
    ("ge_int", lambda lib, a, b: a.clone().ge_(b), ("int64", "float32"), ([0, 3, -1], CORNERS), False),
    ("renorm", lambda lib, x: lib.renorm(x.reshape(2, 5), 2, 0, 1.5), ("float64",),
     ([0.3, -2.0, 1.0, 0.1, 4.0, 0.2, 0.1, -0.3, 0.4, 0.5],), True),
    ("hardshrink", lambda lib, x: x.hardshrink(1.0), ("float32",), (CORNERS,), True),
    ("is_signed", lambda lib, x: lib.tensor([x.is_signed(), x.byte().is_signed(), x.char().is_signed()]),
     ("float32",), ([1.0],), False),
]


@pytest.mark.parametrize("name, fn, dtypes, columns, grad", OPS, ids=[o[0] for o in OPS])
def test_matches_pytorch(name, fn, dtypes, columns, grad):
    torch = pytest.importorskip("torch")
    arrays = grid(*columns)
    with np.errstate(all="ignore"):
        got_dtype, got, got_grads = run(mt, fn, arrays, dtypes, grad)
    want_dtype, want, want_grads = run(torch, fn, arrays, dtypes, grad)
    assert got_dtype == want_dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", ["is_nonzero", "frexp", "gcd", "nextafter", "mvlgamma", "positive"])
def test_errors_match_pytorch(name):
    torch = pytest.importorskip("torch")
    calls = {"is_nonzero": lambda lib: lib.is_nonzero(lib.tensor([1.0, 2.0])),
             "frexp": lambda lib: lib.frexp(lib.tensor([1, 2])),
             "gcd": lambda lib: lib.gcd(lib.tensor([1.0]), lib.tensor([2.0])),
             "nextafter": lambda lib: lib.nextafter(lib.tensor([1]), lib.tensor([2])),
             "mvlgamma": lambda lib: lib.mvlgamma(lib.tensor([1.0]), 0),
             "positive": lambda lib: lib.positive(lib.tensor([True]))}
    with pytest.raises(Exception) as want:
        calls[name](torch)
    with pytest.raises(type(want.value)) as got:
        calls[name](mt)
    assert str(got.value).split(":")[0][:20] == str(want.value).split(":")[0][:20]
