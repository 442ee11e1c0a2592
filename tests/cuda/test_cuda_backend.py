"""The CUDA backend against the NumPy backend, on a GPU (marked ``gpu``; skipped without a usable one).

``CASES`` runs every deterministic method of the Backend interface on both backends from the same host
data and compares every result and every array argument afterwards (so in-place updates and untouched
inputs are checked too) with tolerances by dtype. The cases of the nn families are here; those of the math
(``backend_cases_math``), array (``backend_cases_arrays``) and matrix, sparse and LSTM
(``backend_cases_linalg``) methods are in their own modules, all built with ``backend_cases``' kit. The random
methods, the identity methods, ``data_ptr``, training steps on both devices, memory over 1,000 steps, transfers and
seeding have their own tests below. ``tests/test_backend_contract.py::test_parity`` also runs its float64 reference
cases on ``cuda``."""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import minitensor as mt
from minitensor.backends import get_backend
from minitensor.backends.base import Backend
from minitensor.backends.generic.sparse import SparseCOO
from backend_cases import CASES, CPU, F16, F32, F64, ONCE, WITH_HALF, Data, On, case, host, transposed
from backend_cases_linalg import SIGN_FREE
import backend_cases_arrays  # noqa: F401 (its cases join CASES)
import backend_cases_math  # noqa: F401 (its cases join CASES)
from test_cuda_availability import run_python

pytestmark = pytest.mark.gpu
if not mt.cuda.is_available():
    pytest.skip("no usable CUDA device (minitensor.cuda.is_available() is False)", allow_module_level=True)

import cupy  # noqa: E402 (only where CUDA is available)

# Relative tolerance by result dtype; the absolute one is the same times the largest expected magnitude.
TOL = {F16: 1e-2, F32: 2e-5, F64: 1e-10}


@pytest.fixture(scope="module")
def cuda() -> Backend:
    return get_backend("cuda", 0)


# --------------------------------------------------------------------------------------------- arrays
case("asarray", "list", lambda d: ([[1.5, -2.0], [0.25, 3.0]], d.dt))
case("asarray", "host", lambda d: (host(d.n(2, 3)),))
case("asarray", "host-cast", lambda d: (host(d.n(2, 3)), np.float64))
case("to_numpy", "", lambda d: (d.n(2, 3),))
case("to_numpy", "view", lambda d: (transposed(d.n(3, 4)),))
for _name in ("empty", "zeros", "ones"):
    case(_name, "", lambda d: ((2, 3), d.dt))
    case(_name, "int64", lambda d: ((4,), np.int64), ONCE)
case("full", "", lambda d: ((2, 2), 3.5, d.dt))
case("arange", "int64", lambda d: (1, 7, 2, np.int64), ONCE)
case("arange", "", lambda d: (0.0, 1.0, 0.25, d.dt))
case("linspace", "", lambda d: (-1.0, 1.0, 5, d.dt))
case("eye", "", lambda d: (2, 3, d.dt))
case("astype", "int64", lambda d: (d.n(5) * 3, np.int64))
case("astype", "half", lambda d: (d.n(5), np.float16))
case("astype", "same", lambda d: (d.n(5), d.dt))
case("copy", "", lambda d: (d.n(2, 3),))
case("copy", "view", lambda d: (transposed(d.n(2, 3)),))
case("ascontiguous", "view", lambda d: (transposed(d.n(2, 3)),))
case("copy_into", "broadcast", lambda d: (On(lambda B: B.zeros((2, 3), d.dt)), d.n(3)))
case("isfinite_all", "finite", lambda d: (d.n(4),))
case("isfinite_all", "inf", lambda d: (np.array([1.0, np.inf], d.dt),))
case("isfinite_all", "nan", lambda d: (np.array([np.nan, 1.0], d.dt),))

# ---------------------------------------------------------------------------------------- elementwise
for _name in ("abs", "exp", "expm1", "sign", "sin", "cos"):
    case(_name, "", lambda d: (d.n(3, 4),), WITH_HALF)
for _name in ("log", "log1p", "sqrt"):
    case(_name, "", lambda d: (d.pos(3, 4),), WITH_HALF)
case("power", "scalar", lambda d: (d.pos(3, 4), 1.5), WITH_HALF)
case("power", "int", lambda d: (d.n(3, 4), 2), WITH_HALF)
case("power", "array", lambda d: (d.pos(3, 4), d.n(3, 4)))
for _name in ("maximum", "minimum"):
    case(_name, "broadcast-nan", lambda d: (np.where(d.bools(3, 4), np.nan, d.n(3, 4)).astype(d.dt), d.n(4)),
         WITH_HALF)
case("clip", "", lambda d: (d.n(3, 4), -0.5, 0.5), WITH_HALF)
case("clip", "upper", lambda d: (d.n(3, 4), None, 0.5))
case("where", "broadcast", lambda d: (d.bools(3, 4), d.n(3, 4), d.n(1, 4)), WITH_HALF)
for _name in ("floor", "ceil", "trunc"):
    case(_name, "", lambda d: (d.n(3, 4) * 3,), WITH_HALF)
for _name in ("log2", "log10"):
    case(_name, "", lambda d: (d.pos(3, 4),), WITH_HALF)
case("round", "", lambda d: (d.n(3, 4) * 3, 0), WITH_HALF)
case("round", "decimals", lambda d: (d.n(3, 4) * 30, -1))
case("remainder", "", lambda d: (d.n(3, 4) * 5, d.pos(4) + 1))
case("expand_dims", "", lambda d: (d.n(3, 4), (0, 2)))
case("split", "", lambda d: (d.n(3, 5), [1, 3], 1))
case("moveaxis", "", lambda d: (d.n(2, 3, 4), 2, 0))
case("take", "", lambda d: (d.n(3, 4), np.array([2, 0, 2]), 1))
case("may_share_memory", "", lambda d: (d.n(3, 4), d.n(3, 4)))
case("flip", "", lambda d: (d.n(2, 3, 4), (0, 2)))
case("cumprod", "", lambda d: (d.n(3, 4), 1))
case("tril", "", lambda d: (d.n(2, 3, 4), -1))
case("triu", "", lambda d: (d.n(2, 4, 3), 1))
case("squeeze", "", lambda d: (d.n(3, 1, 4), (1,)))

# ---------------------------------------------------------------------------------------- comparisons
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    case(_name, "", lambda d: (np.round(d.n(3, 4)), np.round(d.n(4))))
    case(_name, "scalar", lambda d: (d.n(3, 4), 0.5))
for _name in ("logical_and", "logical_or", "logical_xor"):
    case(_name, "", lambda d: (d.bools(3, 4), d.bools(4)), ONCE)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    case(_name, "", lambda d: (d.ints(-9, 9, 3, 4), d.ints(-9, 9, 4)), ONCE)
case("logical_not", "", lambda d: (d.bools(3, 4),), ONCE)
case("bitwise_not", "", lambda d: (d.ints(-9, 9, 3, 4),), ONCE)
for _name in ("isnan", "isinf", "isfinite"):
    case(_name, "", lambda d: (np.array([1.0, np.nan, np.inf, -np.inf, 0.0], d.dt),), WITH_HALF)

# --------------------------------------------------------------------------------------------- reduce
for _name in ("sum", "mean", "prod", "amax", "amin"):
    for _axis in (None, (1,), (0, 2)):
        for _keep in (False, True):
            case(_name, f"{_axis}-{_keep}", lambda d, a=_axis, k=_keep: (d.n(2, 3, 4), a, k))
case("var", "unbiased", lambda d: (d.n(2, 3, 4), (0, 2), 1, True))
case("var", "all", lambda d: (d.n(2, 3, 4), None, 0, False))
for _name in ("argmax", "argmin"):
    case(_name, "axis", lambda d: (d.n(3, 5), 1, False))
    case(_name, "keep", lambda d: (d.n(3, 5), 0, True))
    case(_name, "flat", lambda d: (d.n(3, 5), None, False))
for _name in ("all", "any"):
    for _axis in (None, (0,), (1, 2)):
        case(_name, str(_axis), lambda d, a=_axis: (d.bools(2, 3, 4), a, False), ONCE)
case("logsumexp", "large", lambda d: (d.n(2, 3, 4) * 30, (1,), False))
case("logsumexp", "all", lambda d: (d.n(2, 3, 4), None, True))
case("logsumexp", "-inf rows", lambda d: (np.full((2, 3), -np.inf, d.dt), (1,), False))

# ---------------------------------------------------------------------------------------------- shape
case("reshape", "", lambda d: (d.n(2, 3, 4), (6, -1)))
case("transpose", "", lambda d: (d.n(2, 3, 4), (2, 0, 1)))
case("broadcast_to", "", lambda d: (d.n(2, 1, 4), (5, 2, 3, 4)))
case("concatenate", "", lambda d: ([d.n(2, 3), d.n(2, 1)], 1))
case("stack", "", lambda d: ([d.n(2, 3), d.n(2, 3)], 2))
case("tile", "", lambda d: (d.n(2, 3), (2, 1, 3)))
for _mode in ("constant", "reflect", "edge"):
    case("pad", _mode, lambda d, m=_mode: (d.n(2, 3, 4), [(0, 0), (1, 2), (2, 1)], m, 1.5))
case("take_along_axis", "", lambda d: (d.n(2, 3, 4), d.ints(0, 3, 2, 5, 4), 1))
case("scatter_add_along_axis", "repeats",
     lambda d: (On(lambda B: B.zeros((2, 4), d.dt)), np.array([[0, 0, 2], [1, 1, 1]]), d.n(2, 3), 1))
case("scatter_add_along_axis", "axis0",
     lambda d: (On(lambda B: B.zeros((3, 2, 4), d.dt)), d.ints(0, 3, 6, 2, 4), d.n(6, 2, 4), 0))
case("index_add", "rows", lambda d: (d.n(5, 3), (np.array([0, 4, 0, 2, 0]),), d.n(5, 3)), WITH_HALF)
case("index_add", "bare", lambda d: (d.n(6), d.ints(0, 6, 20), d.n(20)))
case("index_add", "pairs", lambda d: (d.n(3, 4), (d.ints(0, 3, 10), d.ints(0, 4, 10)), d.n(10)))
case("index_add", "slice", lambda d: (d.n(3, 4), (slice(None), np.array([1, 1, 3])), d.n(3, 3)))
case("index_add", "int64", lambda d: (d.ints(-9, 9, 4, 2), (np.array([0, 3, 0, 0]),),
                                      np.array([[2**40, -3]] * 4)), ONCE)
# the dtypes CuPy's add.at refuses (reduce_at there): repeated rows, bool adding as "or"
for _dt in ("bfloat16", "int8", "uint8", "int16", "bool"):
    case("index_add", _dt, lambda d, t=_dt: (np.array([[1, 0], [3, 1], [0, 2]]).astype(t), (np.array([2, 0, 2, 2]),),
                                             np.array([[1, 1], [0, 1], [1, 0], [1, 1]]).astype(t)), ONCE)
for _reduce in ("prod", "amax", "amin"):
    case("combine_at", _reduce, lambda d, r=_reduce: (r, d.n(4, 3), (d.ints(0, 4, 9), d.ints(0, 3, 9)), d.n(9)),
         WITH_HALF)
    case("combine_at", f"{_reduce}-int", lambda d, r=_reduce: (
        r, d.ints(-5, 5, 4, 3), (d.ints(0, 4, 9), d.ints(0, 3, 9)), d.ints(-3, 4, 9)), ONCE)
case("sum_to_shape", "", lambda d: (d.n(5, 2, 3, 4), (2, 1, 4)))
case("sum_to_shape", "lead", lambda d: (d.n(5, 2, 3, 4), (4,)))
case("sum_to_shape", "scalar", lambda d: (d.n(5, 2), ()))
case("sum_to_shape", "same", lambda d: (d.n(5, 2), (5, 2)))

# --------------------------------------------------------------------------------------------- linalg
case("matmul", "batched", lambda d: (d.n(4, 2, 3), d.n(3, 5)))
case("matmul", "views", lambda d: (transposed(d.n(3, 2)),
                                   On(lambda B, b=d.n(4, 5, 3): B.asarray(b).swapaxes(1, 2))))
case("matmul", "vector", lambda d: (d.n(3), d.n(2, 3, 4)))

# ---------------------------------------------------------------------------------------- activations
# name -> (forward parameters, the array its backward takes: "y" (the output) or "x", backward-only ones)
ACTIVATIONS = {
    "relu": ((), "y", ()), "sigmoid": ((), "y", ()), "tanh": ((), "y", ()),
    "leaky_relu": ((0.1,), "y", ()), "elu": ((1.3,), "y", (True,)), "hardtanh": ((-1.0, 1.0), "y", ()),
    "gelu": (("none",), "x", ()), "silu": ((), "x", ()), "softplus": ((2.0, 3.0), "x", ()),
    "softmax": ((1,), "y", ()), "log_softmax": ((0,), "y", ()),
}
for _name, (_params, _saved, _extra) in ACTIVATIONS.items():
    case(_name, "", lambda d, f=_name, p=_params: (d.away(3, 5), *p), WITH_HALF)

    def _backward(d: Data, f: str = _name, p: tuple = _params, saved: str = _saved, extra: tuple = _extra):
        x = d.away(3, 5)
        arg = On(lambda B: getattr(B, f)(B.asarray(x), *p)) if saved == "y" else x
        return (d.n(3, 5), arg, *p, *extra)
    case(_name + "_backward", "", _backward, WITH_HALF)
case("elu_backward", "from-x", lambda d: (d.n(3, 5), d.away(3, 5), 1.3, False))
case("gelu", "tanh", lambda d: (d.n(3, 5), "tanh"), WITH_HALF)
case("gelu_backward", "tanh", lambda d: (d.n(3, 5), d.n(3, 5), "tanh"), WITH_HALF)
case("softmax", "last", lambda d: (d.n(2, 3, 7) * 10, -1), WITH_HALF)
case("attention_softmax", "causal", lambda d: (d.n(2, 3, 5, 7) * 4, True))
case("attention_softmax", "masked-rows", lambda d: (np.where(d.bools(2, 4, 6), -np.inf, d.n(2, 4, 6)).astype(d.dt),
                                                    False))
case("attention_softmax_backward", "", lambda d: (d.n(2, 3, 5, 7), CPU.attention_softmax(d.n(2, 3, 5, 7), True)))
case("log_softmax", "last", lambda d: (d.n(2, 3, 7) * 10, -1), WITH_HALF)
case("erf", "tails", lambda d: (np.linspace(-6, 6, 97).astype(d.dt),), WITH_HALF)
case("erf", "", lambda d: (d.n(3, 5),), WITH_HALF)
# The activations whose backward takes x, on values past hardsigmoid's kinks at +-3 (and exactly there: PyTorch
# picks a side), past softplus' threshold (mish) and at both zeros.
SMALL_ACTIVATIONS = {"celu": (1.3,), "selu": (), "mish": (), "hardsigmoid": (), "hardswish": (), "logsigmoid": (),
                     "softsign": ()}


def _past_the_kinks(d: Data) -> np.ndarray:
    return d.with_edges(d.n(4, 5) * 3, [-3.0, 3.0, 0.0, -0.0, 25.0, -25.0])


for _name, _params in SMALL_ACTIVATIONS.items():
    case(_name, "", lambda d, p=_params: (_past_the_kinks(d), *p), WITH_HALF)
    case(_name + "_backward", "", lambda d, p=_params: (d.n(4, 5), _past_the_kinks(d), *p), WITH_HALF)
case("celu", "alpha", lambda d: (_past_the_kinks(d), 0.25), WITH_HALF)
case("celu_backward", "alpha", lambda d: (d.n(4, 5), _past_the_kinks(d), 0.25), WITH_HALF)

# ----------------------------------------------------------------------------------------------- conv
# (x shape, C_out, kernel, stride, padding (top, bottom, left, right), dilation, groups, bias)
CONV2D = {
    "basic": ((2, 3, 7, 6), 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    "strided": ((2, 4, 9, 8), 6, (3, 2), (2, 1), (0, 1, 2, 0), (1, 2), 2, False),
    "grouped": ((1, 4, 6, 6), 8, (3, 3), (1, 2), (1, 1, 0, 0), (2, 1), 4, True),
    "1x1": ((3, 5, 4, 4), 2, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
}
for _label, (_xs, _cout, _k, _s, _p, _dil, _g, _bias) in CONV2D.items():
    def _conv2d_args(d: Data, xs=_xs, cout=_cout, k=_k, s=_s, p=_p, dil=_dil, g=_g, bias=_bias):
        return (d.n(*xs), d.n(cout, xs[1] // g, *k), d.n(cout) if bias else None, s, p, dil, g)
    case("conv2d", _label, _conv2d_args)

    def _conv2d_backward(d: Data, make=_conv2d_args):
        x, w, b, s, p, dil, g = make(d)
        gy = d.n(*CPU.conv2d(x, w, b, s, p, dil, g).shape)
        return [(gy, x, w, s, p, dil, g, needs) for needs in ((True, True, True), (False, True, False))]
    case("conv2d_backward", _label, lambda d, f=_conv2d_backward: f(d)[0])
    case("conv2d_backward", _label + "-weight-only", lambda d, f=_conv2d_backward: f(d)[1])

    def _im2col_args(d: Data, make=_conv2d_args):
        x, w, b, s, p, dil, g = make(d)
        return (x, w.shape[2:], s, p, dil, CPU.conv2d(x, w, b, s, p, dil, g).shape[2:], g)
    case("im2col", _label, _im2col_args)

    def _col2im_args(d: Data, make=_conv2d_args):
        x, w, b, s, p, dil, g = make(d)
        gy = d.n(*CPU.conv2d(x, w, b, s, p, dil, g).shape)
        gy2 = np.ascontiguousarray(gy.transpose(0, 2, 3, 1)).reshape(-1, gy.shape[1])
        return (gy2, gy.shape[2:], w, x.shape, s, p, dil, g)
    case("col2im", _label, _col2im_args)

# (x shape, C_out, kernel, stride, padding (pH, pW), output_padding, dilation, groups, bias)
CONV_T = {
    "basic": ((2, 4, 5, 4), 3, (3, 3), (2, 2), (1, 1), (1, 0), (1, 1), 1, True),
    "grouped": ((1, 4, 4, 5), 4, (2, 3), (1, 2), (0, 1), (0, 1), (2, 1), 2, False),
}
for _label, (_xs, _cout, _k, _s, _p, _op, _dil, _g, _bias) in CONV_T.items():
    def _conv_t_args(d: Data, xs=_xs, cout=_cout, k=_k, s=_s, p=_p, op=_op, dil=_dil, g=_g, bias=_bias):
        return (d.n(*xs), d.n(xs[1], cout // g, *k), d.n(cout) if bias else None, s, p, op, dil, g)
    case("conv_transpose2d", _label, _conv_t_args)

    def _conv_t_backward(d: Data, make=_conv_t_args):
        x, w, b, s, p, op, dil, g = make(d)
        gy = d.n(*CPU.conv_transpose2d(x, w, b, s, p, op, dil, g).shape)
        return (gy, x, w, s, p, op, dil, g, (True, True, True))
    case("conv_transpose2d_backward", _label, _conv_t_backward)

# ----------------------------------------------------------------------------------------------- pool
# (kernel, stride, padding, dilation, ceil_mode)
MAX_POOL = {"2x2": ((2, 2), (2, 2), (0, 0), (1, 1), False),
            "overlap-ceil": ((3, 3), (2, 2), (1, 1), (1, 1), True),
            "dilated": ((3, 2), (1, 2), (1, 0), (2, 1), False)}
for _label, _geometry in MAX_POOL.items():
    case("max_pool2d", _label, lambda d, g=_geometry: (d.n(2, 3, 7, 8), *g), WITH_HALF)

    def _max_pool_backward(d: Data, g=_geometry):
        x = d.n(2, 3, 7, 8)
        y, offsets = CPU.max_pool2d(x, *g)
        return (d.n(*y.shape), offsets, x.shape, *g[:4])
    case("max_pool2d_backward", _label, _max_pool_backward, WITH_HALF)

    def _max_pool_indices(d: Data, g=_geometry):
        x = d.n(2, 3, 7, 8)
        return (CPU.max_pool2d(x, *g)[1], x.shape, *g[:4])
    case("max_pool2d_indices", _label, _max_pool_indices, ONCE)


def _with_nans(d: Data) -> np.ndarray:
    x = d.n(2, 3, 6, 6)
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = x[1, 2, 5, 5] = np.nan  # the last NaN of a window wins, as PyTorch
    x[1, 1, :2, :2] = -np.inf
    return x


case("max_pool2d", "nan-inf", lambda d: (_with_nans(d), (2, 2), (2, 2), (1, 1), (1, 1), False))
# (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_POOL = {"2x2": ((2, 2), (2, 2), (0, 0), False, True, None),
            "ceil-exclude-pad": ((3, 3), (2, 2), (1, 1), True, False, None),
            "divisor": ((3, 3), (2, 1), (1, 1), False, True, 5)}
for _label, _geometry in AVG_POOL.items():
    case("avg_pool2d", _label, lambda d, g=_geometry: (d.n(2, 3, 7, 8), *g), WITH_HALF)
    case("avg_pool2d_backward", _label, lambda d, g=_geometry: (
        d.n(*CPU.avg_pool2d(np.zeros((2, 3, 7, 8), d.dt), *g).shape), (2, 3, 7, 8), *g), WITH_HALF)
for _label, _out in {"shrink": (3, 4), "global": (1, 1), "grow": (9, 11)}.items():
    case("adaptive_avg_pool2d", _label, lambda d, o=_out: (d.n(2, 3, 7, 9), o))
    case("adaptive_avg_pool2d_backward", _label, lambda d, o=_out: (d.n(2, 3, *o), (2, 3, 7, 9)))
    case("adaptive_max_pool2d", _label, lambda d, o=_out: (d.n(2, 3, 7, 9), o), WITH_HALF)
case("adaptive_max_pool2d", "ties", lambda d: (np.round(d.n(2, 3, 7, 9)).astype(d.dt), (3, 4)))
case("adaptive_max_pool2d", "nan-inf", lambda d: (_with_nans(d), (4, 4)), WITH_HALF)
case("adaptive_max_pool3d", "shrink", lambda d: (np.round(d.n(2, 3, 5, 7, 6)).astype(d.dt), (2, 3, 4)), WITH_HALF)
case("adaptive_max_pool3d", "grow-nan", lambda d: (_with_nans(d).reshape(2, 3, 4, 3, 3), (5, 2, 4)))


def _samples(d: Data, dims: int) -> np.ndarray:
    return np.random.default_rng(dims).random((3, 3, dims)).astype(d.dt)  # more rows than the batch


case("fractional_max_pool2d", "", lambda d: (np.round(d.n(2, 3, 9, 8)).astype(d.dt), (2, 3), (5, 4), _samples(d, 2)),
     WITH_HALF)
case("fractional_max_pool2d", "nan-inf", lambda d: (_with_nans(d), (2, 2), (4, 5), _samples(d, 2)))
case("fractional_max_pool3d", "", lambda d: (np.round(d.n(2, 3, 6, 7, 5)).astype(d.dt), (2, 3, 2), (3, 4, 3),
                                             _samples(d, 3)), WITH_HALF)


# ------------------------------------------------------------------------------------------------ norm
def _batch_norm_args(d: Data, shape: tuple[int, ...], training: bool, affine: bool = True) -> tuple:
    c = shape[1]
    return (d.n(*shape), d.n(c) if affine else None, d.n(c) if affine else None, d.n(c), d.pos(c), training,
            0.1, 1e-5)


case("batch_norm_forward", "train-4d", lambda d: _batch_norm_args(d, (4, 3, 5, 5), True))
case("batch_norm_forward", "train-2d", lambda d: _batch_norm_args(d, (8, 3), True, affine=False))
case("batch_norm_forward", "eval", lambda d: _batch_norm_args(d, (4, 3, 5, 5), False))
for _training in (True, False):
    def _batch_norm_backward(d: Data, training: bool = _training):
        x, w, b, rm, rv, _, momentum, eps = _batch_norm_args(d, (4, 3, 5, 5), training)
        y, mean, invstd = CPU.batch_norm_forward(x, w, b, rm, rv, training, momentum, eps)
        return (d.n(*y.shape), x, w, mean, invstd, training, (True, True, True))
    case("batch_norm_backward", f"training={_training}", _batch_norm_backward)


def _layer_norm_args(d: Data, normalized_ndim: int, affine: bool) -> tuple:
    x = d.n(4, 5, 6)
    norm_shape = x.shape[-normalized_ndim:]
    return (x, d.n(*norm_shape) if affine else None, d.n(*norm_shape) if affine else None, normalized_ndim,
            1e-5)


for _ndim, _affine in ((1, True), (2, False)):
    case("layer_norm_forward", f"{_ndim}-{_affine}", lambda d, k=_ndim, a=_affine: _layer_norm_args(d, k, a))

    def _layer_norm_backward(d: Data, k: int = _ndim, affine: bool = _affine):
        x, w, b, _, eps = _layer_norm_args(d, k, affine)
        y, mean, invstd = CPU.layer_norm_forward(x, w, b, k, eps)
        return (d.n(*y.shape), x, w, mean, invstd, k, (True, affine, affine))
    case("layer_norm_backward", f"{_ndim}-{_affine}", _layer_norm_backward)


# ------------------------------------------------------------------------------------------------ loss
def _targets(d: Data, shape: tuple[int, ...], classes: int) -> np.ndarray:
    t = d.ints(0, classes, *shape)
    t.reshape(-1)[::4] = -100  # ignored
    return t


# (logits shape, weighted, label_smoothing)
CROSS_ENTROPY = {"2d": ((6, 5), False, 0.0), "2d-weighted-smoothed": ((6, 5), True, 0.1),
                 "4d": ((2, 5, 3, 4), True, 0.0), "4d-smoothed": ((2, 5, 3, 4), False, 0.2)}


def _class_loss_args(d: Data, shape: tuple[int, ...], weighted: bool, eps: float) -> dict[str, tuple]:
    """The arguments of every class-loss method for logits of ``shape`` (N, C, *)."""
    logits, probs = d.n(*shape) * 3, d.probs(*shape)
    target = _targets(d, (shape[0],) + shape[2:], shape[1])
    weight = d.pos(shape[1]) if weighted else None
    g, log_probs = d.n(*target.shape), CPU.log_softmax(logits, 1)
    return {"softmax_cross_entropy": (logits, target, weight, -100, eps),
            "softmax_cross_entropy_backward": (g, log_probs, target, weight, -100, eps),
            "nll_loss": (log_probs, target, weight, -100),
            "nll_loss_backward": (g, target, weight, -100, shape[1]),
            "class_target_weights": (target, weight, -100, d.dt),
            "softmax_cross_entropy_probs": (logits, probs, weight, eps),
            "softmax_cross_entropy_probs_backward": (g, log_probs, probs, weight, eps, (True, True))}


for _label, _spec in CROSS_ENTROPY.items():
    for _name in _class_loss_args(Data(F64, 0), *_spec):
        case(_name, _label, lambda d, s=_spec, n=_name: _class_loss_args(d, *s)[n])


def _probabilities(d: Data) -> np.ndarray:
    x = (d.r.random((4, 3)) * 0.98 + 0.01).astype(d.dt)
    x[0, 0], x[0, 1] = 0.0, 1.0  # PyTorch's clamped logs
    return x


case("binary_cross_entropy", "", lambda d: (_probabilities(d), d.r.random((4, 3)).astype(d.dt)))
case("binary_cross_entropy_backward", "", lambda d: (
    d.n(4, 3), (d.r.random((4, 3)) * 0.98 + 0.01).astype(d.dt), d.r.random((4, 3)).astype(d.dt), (True, True)))
for _label, _weighted in (("", False), ("pos-weight", True)):
    case("bce_with_logits", _label, lambda d, w=_weighted: (
        d.n(4, 3) * 5, d.r.random((4, 3)).astype(d.dt), d.pos(3) if w else None))
    case("bce_with_logits_backward", _label, lambda d, w=_weighted: (
        d.n(4, 3), d.n(4, 3) * 5, d.r.random((4, 3)).astype(d.dt), d.pos(3) if w else None, (True, True)))
for _name, _params in {"smooth_l1_loss": (1.0, 0.0), "huber_loss": (1.0, 0.5)}.items():
    for _param in _params:  # smooth_l1 at beta 0 is l1
        case(_name, f"{_param}", lambda d, p=_param: (d.n(4, 3) * 2, d.n(4, 1), p), WITH_HALF)
        case(_name + "_backward", f"{_param}", lambda d, p=_param: (d.n(4, 3), d.n(4, 3) * 2, d.n(4, 1), p),
             WITH_HALF)
for _name in ("mse_loss", "l1_loss"):
    case(_name, "broadcast", lambda d: (d.n(4, 3), d.n(4, 1)))
    case(_name + "_backward", "broadcast", lambda d: (d.n(4, 3), d.n(4, 3), d.n(4, 1)))



def _ctc_args(d: Data) -> tuple:
    """log_probs (T=6, N=3, C=4) normalised over C, targets (3, 3) padded, input and target lengths, blank 0."""
    z = d.n(6, 3, 4)
    log_probs = (z - np.log(np.exp(z.astype(np.float64)).sum(-1, keepdims=True))).astype(d.dt)
    targets = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]], np.int64)
    return log_probs, targets, np.array([6, 5, 2], np.int64), np.array([3, 2, 1], np.int64), 0


case("ctc_loss", "", _ctc_args)
for _zero_infinity in (False, True):
    case("ctc_loss_backward", f"zero_infinity={_zero_infinity}", lambda d, z=_zero_infinity: (
        d.pos(3), *_ctc_args(d)[:4], *CPU.ctc_loss(*_ctc_args(d)), 0, z))

# ----------------------------------------------------------------------------------- dropout, embedding
case("dropout_backward", "", lambda d: (d.n(4, 5), d.bools(4, 5), 0.3), WITH_HALF)
case("dropout_backward", "p=1", lambda d: (d.n(4, 5), np.zeros((4, 5), bool), 1.0))
case("embedding", "", lambda d: (d.n(7, 4), d.ints(0, 7, 2, 3)))
for _padding, _scale in ((None, False), (2, True)):
    case("embedding_backward", f"{_padding}-{_scale}", lambda d, p=_padding, s=_scale: (
        d.n(3, 5, 4), d.ints(0, 7, 3, 5), 7, p, s))
    case("embedding_sparse_backward", f"{_padding}", lambda d, p=_padding: (d.n(3, 5, 4), d.ints(0, 7, 3, 5), 7, p))


def _bags(d: Data, ties: bool) -> tuple:
    """weight (7, 4) (integer-valued with ``ties``: tied maxima), indices (15,), bag bounds with empty bags."""
    weight = d.ints(-1, 2, 7, 4).astype(d.dt) if ties else d.n(7, 4)
    return weight, d.ints(0, 7, 15), np.array([0, 0, 4, 9, 9, 15], np.int64)


def _bag_backward(d: Data, mode: str, padding: int | None, ties: bool, weighted: bool) -> tuple:
    """embedding_bag_backward's arguments: gy (5, 4), the bags, and max's arg-max rows from the CPU."""
    weight, indices, offsets = _bags(d, ties)
    psw = d.n(15) if weighted else None
    rows = CPU.embedding_bag_forward(weight, indices, offsets, mode, psw, padding)[1]
    return d.n(5, 4), indices, offsets, 7, mode, psw, padding, mode != "max", rows


for _padding in (None, 3):
    for _mode, _ties in (("sum", False), ("mean", False), ("max", False), ("max", True)):
        case("embedding_bag_forward", f"{_mode}-{_padding}-ties={_ties}", lambda d, m=_mode, p=_padding, t=_ties: (
            *_bags(d, t), m, None, p), WITH_HALF)
        case("embedding_bag_backward", f"{_mode}-{_padding}-ties={_ties}", lambda d, m=_mode, p=_padding, t=_ties:
             _bag_backward(d, m, p, t, False))
    case("embedding_bag_forward", f"weighted-{_padding}", lambda d, p=_padding: (*_bags(d, False), "sum", d.n(15), p))
    case("embedding_bag_backward", f"weighted-{_padding}", lambda d, p=_padding: _bag_backward(d, "sum", p, False,
                                                                                              True))
    case("embedding_bag_per_sample_weights_backward", f"{_padding}", lambda d, p=_padding: (
        d.n(5, 4), *_bags(d, False), p))


# ----------------------------------------------------------------------------------------------- optim
def _sgd(d: Data, momentum: float, nesterov: bool, maximize: bool, first_step: bool) -> tuple:
    return (d.n(3, 4), d.n(3, 4), d.n(3, 4) if momentum else None, 0.1, momentum, 0.0 if nesterov else 0.1,
            nesterov, 0.01, maximize, first_step)


for _args in ((0.9, False, False, False), (0.9, True, True, False), (0.9, False, False, True),
              (0.0, False, False, False)):
    case("sgd_update", "-".join(map(str, _args)), lambda d, a=_args: _sgd(d, *a))
for _amsgrad, _decoupled, _maximize in ((False, False, False), (True, False, True), (False, True, False)):
    case("adam_update", f"ams={_amsgrad}-w={_decoupled}-max={_maximize}",
         lambda d, a=_amsgrad, w=_decoupled, m=_maximize: (
             d.n(3, 4), d.n(3, 4), d.n(3, 4) * 0.1, d.pos(3, 4) * 0.01, d.pos(3, 4) * 0.01 if a else None, 3,
             1e-2, 0.9, 0.999, 1e-8, 0.01, a, w, m))
for _momentum, _centered in ((0.0, False), (0.9, True)):
    case("rmsprop_update", f"momentum={_momentum}-centered={_centered}", lambda d, mo=_momentum, c=_centered: (
        d.n(3, 4), d.n(3, 4), d.pos(3, 4) + 0.5, d.n(3, 4) if mo else None, d.n(3, 4) * 0.1 if c else None,
        1e-2, 0.99, 1e-8, 0.01, mo, c, False))
case("adagrad_update", "", lambda d: (d.n(3, 4), d.n(3, 4), d.pos(3, 4), 2, 0.1, 0.01, 0.01, 1e-10, True))
for _wd, _maximize in ((0.0, False), (0.01, True)):
    _label = f"wd={_wd}-max={_maximize}"
    case("adadelta_update", _label, lambda d, w=_wd, m=_maximize: (
        d.n(3, 4), d.n(3, 4), d.pos(3, 4), d.pos(3, 4) * 0.01, 1.0, 0.9, 1e-6, w, m))
    case("adamax_update", _label, lambda d, w=_wd, m=_maximize: (
        d.n(3, 4), d.n(3, 4), d.n(3, 4) * 0.1, d.pos(3, 4), 3, 2e-3, 0.9, 0.999, 1e-8, w, m))
    case("asgd_update", _label + "-averaging", lambda d, w=_wd, m=_maximize: (
        d.n(3, 4), d.n(3, 4), d.n(3, 4), 0.01, 0.25, 1e-4, w, m))
    case("asgd_update", _label + "-copy", lambda d, w=_wd, m=_maximize: (
        d.n(3, 4), d.n(3, 4), d.n(3, 4), 0.01, 1.0, 1e-4, w, m))
for _decoupled in (False, True):
    case("nadam_update", f"decoupled={_decoupled}", lambda d, w=_decoupled: (
        d.n(3, 4), d.n(3, 4), d.n(3, 4) * 0.1, d.pos(3, 4) * 0.01, 3, 2e-3, 0.9, 0.999, 1e-8, 0.01, 0.85, 0.86,
        0.6, w, not w))
    for _step in (2, 9):  # the plain momentum step, then the rectified one (rho_t > 5 from t = 6)
        case("radam_update", f"decoupled={_decoupled}-step={_step}", lambda d, w=_decoupled, t=_step: (
            d.n(3, 4), d.n(3, 4), d.n(3, 4) * 0.1, d.pos(3, 4) * 0.01, t, 1e-3, 0.9, 0.999, 1e-8, 0.01, w, w))

for _maximize in (False, True):
    case("rprop_update", f"max={_maximize}", lambda d, m=_maximize: (
        d.n(3, 4), d.n(3, 4), d.n(3, 4), d.pos(3, 4) * 0.1, 0.5, 1.2, 0.05, 0.2, m))
case("sparse_adam_update", "", lambda d: (  # unique indices, as a coalesced gradient's are
    d.n(5, 3), np.array([[0, 3, 4]]), d.n(3, 3), d.n(5, 3) * 0.1, d.pos(5, 3) * 0.01, 3, 1e-3, 0.9, 0.999, 1e-8,
    True))

case("standard_gamma_grad", "", lambda d: (d.pos(3, 4) * 3 + 0.1, d.pos(3, 4) * 2 + 0.01), ONCE)
for _kind in ("j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e"):
    case("bessel", _kind, lambda d, k=_kind: (k, d.pos(3, 4) * 5 + 0.1))
case("zeta", "", lambda d: (d.pos(3, 4) * 3 + 1.1, d.pos(3, 4) * 2 + 0.1), ONCE)

# ------------------------------------------------------------------------------------------------- amp
def _gradients(d: Data, bad: float | None) -> list[Any]:
    """Gradients of three dtypes and one transposed view (the generic body; the contiguous ones take the
    kernel), with ``bad`` (inf, nan) in the last."""
    last = d.n(5)
    if bad is not None:
        last[3] = bad
    return [d.n(3, 4).astype(np.float16), transposed(d.n(4, 3)), d.n(6).astype(np.float32), last]


for _label, _bad in (("finite", None), ("inf", -np.inf), ("nan", np.nan)):
    case("amp_unscale_and_check_inf", _label, lambda d, b=_bad: (_gradients(d, b), 1 / 1024))

RANDOM = {"seed", "get_rng", "set_rng", "copy_rng", "uniform", "normal", "randint", "bernoulli", "permutation",
          "dropout", "exponential", "geometric", "cauchy", "poisson", "multinomial", "standard_gamma"}
IDENTITY = {"is_available", "device_count", "synchronize", "unavailable_reason"}
ADDRESS = {"data_ptr"}  # a device address, not a value to compare: test_data_ptr_is_the_device_address


# -------------------------------------------------------------------------------------------- running
def on_backend(B: Backend, v: Any) -> Any:
    """Host arrays in ``v`` (nested in tuples and lists) made ``B``'s arrays."""
    if isinstance(v, On):
        return v.make(B)
    if isinstance(v, np.ndarray):
        return B.asarray(v)
    if isinstance(v, (tuple, list)):
        return type(v)(on_backend(B, e) for e in v)
    return v


def leaves(v: Any) -> list[Any]:
    """The arrays and numbers in ``v``: nested tuples and lists, and a sparse array's parts."""
    if isinstance(v, SparseCOO):
        return leaves((v.indices, v.values, v.shape, v.coalesced))
    return [x for e in v for x in leaves(e)] if isinstance(v, (tuple, list)) else [v]


def assert_matches(got: Any, want: Any, where: str, on_host: bool = False, values: bool = True) -> None:
    """``got`` (CUDA) equals ``want`` (NumPy): same type of result, shape and dtype; floats within TOL. A
    NumPy scalar (NumPy's full reductions) must be a 0-d array on CUDA."""
    if isinstance(want, np.generic):
        want = np.asarray(want)
    if not isinstance(want, np.ndarray):
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != {want!r}"
        return
    assert isinstance(got, np.ndarray if on_host else cupy.ndarray), f"{where}: got a {type(got).__name__}"
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{where}: {got.shape} {got.dtype} != {want.shape} {want.dtype}"
    if not values:  # uninitialised memory: its layout is what there is to compare (before a copy to the host)
        assert got.strides == want.strides, f"{where}: strides {got.strides} != {want.strides}"
        return
    if not on_host:
        assert got.device.id == 0, f"{where}: on GPU {got.device.id}"
        got = cupy.asnumpy(got)
    if want.dtype.kind == "f":
        tol = TOL[want.dtype]
        scale = float(np.nanmax(np.abs(np.where(np.isinf(want), 0, want)), initial=0.0)) or 1.0
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def case_id(name: str, label: str, dt: np.dtype) -> str:
    return "-".join(p for p in (name, label, dt.name) if p)


PARAMS = [pytest.param(name, build, dt, id=case_id(name, label, dt))
          for name, label, build, dtypes in CASES for dt in dtypes]


@pytest.mark.parametrize("name, build, dt", PARAMS)
def test_cuda_matches_numpy(cuda, name, build, dt, request):
    args = build(Data(dt, zlib.crc32(request.node.callspec.id.encode())))
    got_args = on_backend(cuda, args)  # first: NumPy's asarray does not copy, and in-place methods write
    got = getattr(cuda, name)(*got_args)
    want_args = on_backend(CPU, args)
    with np.errstate(all="ignore"):  # cases with inf and nan inputs are meant
        want = getattr(CPU, name)(*want_args)
    if name in SIGN_FREE:  # eigen-, singular and QR vectors: each backend's signs made the same
        got, want = SIGN_FREE[name](cupy, got), SIGN_FREE[name](np, want)
    values = name not in ("empty", "empty_strided")
    got_out, want_out = leaves(got), leaves(want)
    assert len(got_out) == len(want_out), f"{name}: {len(got_out)} results, {len(want_out)} expected"
    for i, (g, w) in enumerate(zip(got_out, want_out)):
        assert_matches(g, w, f"{name} result {i}", on_host=name == "to_numpy", values=values)
    for i, (g, w) in enumerate(zip(leaves(got_args), leaves(want_args))):  # in-place updates, and no others
        if isinstance(w, np.ndarray):
            assert_matches(g if isinstance(g, cupy.ndarray) else np.asarray(g), w, f"{name} argument {i}",
                           on_host=not isinstance(g, cupy.ndarray))


def test_every_backend_method_is_checked_on_cuda():
    methods = {n for n in dir(Backend) if not n.startswith("_") and callable(getattr(Backend, n))
               and not isinstance(getattr(Backend, n), type)}
    covered = {name for name, *_ in CASES} | RANDOM | IDENTITY | ADDRESS
    assert methods - covered == set(), f"Backend methods never run on CUDA here: {sorted(methods - covered)}"
    assert covered - methods == set(), f"cases for methods Backend no longer has: {sorted(covered - methods)}"


# --------------------------------------------------------------------------------- identity, random
def test_identity(cuda):
    assert cuda.name == "cuda" and cuda.xp is cupy and cuda.array_type is cupy.ndarray and cuda.index == 0
    assert type(cuda).is_available() and type(cuda).device_count() == cupy.cuda.runtime.getDeviceCount() >= 1
    assert type(cuda).unavailable_reason() == ""
    x = cuda.matmul(cuda.ones((512, 512), np.float32), cuda.ones((512, 512), np.float32))
    cuda.synchronize()
    assert cupy.cuda.get_current_stream().done and float(x[0, 0]) == 512.0
    assert repr(cuda) == "CudaBackend(index=0)"


def test_a_device_index_past_the_last_gpu_is_refused():
    count = mt.cuda.device_count()
    with pytest.raises(RuntimeError, match=f"cuda:{count}' does not exist: this machine has {count}"):
        mt.zeros(1, device=f"cuda:{count}")


def test_random_methods_draw_on_the_gpu_with_the_right_statistics(cuda):
    for dt in WITH_HALF:
        u = cuda.uniform((20000,), -2.0, 3.0, dt)
        z = cuda.normal((20000,), 1.0, 2.0, dt)
        for a in (u, z):
            assert isinstance(a, cupy.ndarray) and a.dtype == dt and a.shape == (20000,)
        u, z = cupy.asnumpy(u).astype(np.float64), cupy.asnumpy(z).astype(np.float64)
        assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.05
        assert abs(z.mean() - 1.0) < 0.05 and abs(z.std() - 2.0) < 0.05
    r = cuda.randint(-2, 3, (5000,), np.int64)
    assert r.dtype == np.int64 and set(cupy.asnumpy(r).tolist()) == {-2, -1, 0, 1, 2}
    m = cuda.bernoulli(0.3, (20000,))
    assert m.dtype == np.bool_ and abs(float(m.mean()) - 0.3) < 0.02
    p = cuda.permutation(1000)
    assert isinstance(p, cupy.ndarray) and p.dtype == np.int64
    p = cupy.asnumpy(p)
    assert sorted(p.tolist()) == list(range(1000)) and not np.array_equal(p, np.arange(1000))


@pytest.mark.parametrize("dt", WITH_HALF, ids=lambda d: d.name)
def test_dropout_keeps_and_scales_as_its_mask_says(cuda, dt):
    x = np.random.default_rng(0).standard_normal((200, 100)).astype(dt)
    for p in (0.0, 0.3, 1.0):
        y, mask = cuda.dropout(cuda.asarray(x), p)
        assert isinstance(y, cupy.ndarray) and y.dtype == dt and mask.shape == x.shape
        y, mask = cupy.asnumpy(y), cupy.asnumpy(mask).astype(bool)
        expected = np.where(mask, x.astype(np.float64) / (1 - p) if p < 1 else 0.0, 0.0)
        np.testing.assert_allclose(y, expected, rtol=TOL[np.dtype(dt)], atol=0)
        assert abs(mask.mean() - (1 - p)) < 0.02


def test_seed_reproduces_every_random_method(cuda):
    def draws():
        return [cupy.asnumpy(a) for a in (
            cuda.uniform((50,), 0.0, 1.0, np.float32), cuda.normal((50,), 0.0, 1.0, np.float64),
            cuda.randint(0, 100, (50,), np.int64), cuda.bernoulli(0.5, (50,)), cuda.permutation(50),
            cuda.dropout(cuda.ones((50,), np.float32), 0.5)[1], cuda.exponential((50,), 1.0, np.float32),
            cuda.geometric((50,), 0.5, np.float64), cuda.cauchy((50,), 0.0, 1.0, np.float16),
            cuda.poisson(cuda.full((50,), 3.0, np.float32)), cuda.multinomial(cuda.ones((2, 5), np.float32), 3, False))]
    cuda.seed(123)
    first = draws()
    cuda.seed(123)
    assert all(np.array_equal(a, b) for a, b in zip(first, draws()))
    cuda.seed(124)
    assert not np.array_equal(first[1], draws()[1])


def test_the_inversion_draws_have_the_right_statistics(cuda):
    for dt in WITH_HALF:
        draws = {"exponential": cuda.exponential((20000,), 2.0, dt), "geometric": cuda.geometric((20000,), 0.25, dt),
                 "cauchy": cuda.cauchy((20000,), 1.0, 0.5, dt)}
        for name, a in draws.items():
            assert isinstance(a, cupy.ndarray) and a.dtype == dt and a.shape == (20000,), name
        e, g, c = (cupy.asnumpy(a).astype(np.float64) for a in draws.values())
        assert e.min() > 0 and abs(e.mean() - 0.5) < 0.02 and abs(e.std() - 0.5) < 0.025
        assert g.min() >= 1 and np.array_equal(g, np.round(g)) and abs(g.mean() - 4.0) < 0.15
        q1, median, q3 = np.percentile(c, [25, 50, 75])  # Cauchy has no mean: its quartiles are median -+ sigma
        assert abs(median - 1.0) < 0.03 and abs(q3 - q1 - 1.0) < 0.06


def test_poisson_and_multinomial_draw_on_the_gpu_with_the_right_statistics(cuda):
    rates = np.array([0.5, 4.0, 30.0])
    k = cuda.poisson(cuda.asarray(np.tile(np.append(rates, 0.0).astype(np.float32), (20000, 1))))
    assert isinstance(k, cupy.ndarray) and k.dtype == np.float32 and k.shape == (20000, 4)
    k = cupy.asnumpy(k)
    assert np.array_equal(k, np.round(k)) and not k[:, 3].any()
    assert (np.abs(k.mean(0)[:3] - rates) < 5 * np.sqrt(rates / 20000)).all(), k.mean(0)  # 5 standard errors
    np.testing.assert_allclose(k.var(0)[:3], rates, rtol=0.1)
    probs = cuda.asarray(np.array([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 1.0, 1.0]]))  # weights: rows need no sum of 1
    drawn = cuda.multinomial(probs, 20000, True)
    assert isinstance(drawn, cupy.ndarray) and drawn.dtype == np.int64 and drawn.shape == (2, 20000)
    counts = np.stack([np.bincount(row, minlength=4) for row in cupy.asnumpy(drawn)]) / 20000
    np.testing.assert_allclose(counts, [[0.1, 0.0, 0.6, 0.3], [0.25] * 4], atol=0.015)
    without = cupy.asnumpy(cuda.multinomial(cuda.asarray(np.tile([[0.1, 0.0, 0.6, 0.3]], (10000, 1))), 3, False))
    assert all(len(set(row)) == 3 and 1 not in row for row in without.tolist())  # distinct, weight 0 never
    assert abs((without[:, 0] == 2).mean() - 0.6) < 0.03  # the first draw follows the weights


def test_a_saved_generator_replays_the_draws(cuda):
    """``get_rng`` / ``copy_rng`` / ``set_rng``, as checkpointing and ``fork_rng`` use them: a copy of the
    generator, set back, draws the same numbers again (CuPy's Generator itself cannot be deep-copied)."""
    cuda.seed(7)
    assert cuda.get_rng() is cuda.get_rng()
    saved = cuda.copy_rng()
    first = [cupy.asnumpy(cuda.normal((50,), 0.0, 1.0, np.float32)), cupy.asnumpy(cuda.permutation(50))]
    cuda.set_rng(saved)
    assert cuda.get_rng() is saved
    again = [cupy.asnumpy(cuda.normal((50,), 0.0, 1.0, np.float32)), cupy.asnumpy(cuda.permutation(50))]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], cupy.asnumpy(cuda.normal((50,), 0.0, 1.0, np.float32)))


def test_data_ptr_is_the_device_address(cuda):
    a = cuda.zeros((4, 6), np.float32)
    assert cuda.data_ptr(a) == a.data.ptr != 0
    assert cuda.data_ptr(a[1:, 2:]) - cuda.data_ptr(a) == (6 + 2) * 4 == cuda.storage_offset(a[1:, 2:])


def test_manual_seed_reproduces_cuda_tensors():
    """In a fresh interpreter, so that the first ``manual_seed`` comes before the CUDA backend is made, as at
    the top of a training script."""
    run_python("""
import numpy as np
import minitensor as mt

def draws():
    ones = mt.ones(1000, device="cuda")
    return [t.cpu().numpy() for t in (mt.randn(100, device="cuda"), mt.rand(100, device="cuda"),
                                      mt.randint(0, 10, (100,), device="cuda"), mt.randperm(100, device="cuda"),
                                      mt.nn.functional.dropout(ones, 0.5, training=True))]

mt.manual_seed(5)
first = draws()
mt.manual_seed(5)
assert all(np.array_equal(a, b) for a, b in zip(first, draws())), "manual_seed(5) twice differs"
mt.manual_seed(6)
assert not np.array_equal(first[0], draws()[0]), "manual_seed(6) repeats manual_seed(5)"
""")


# ------------------------------------------------------------------------------------------ transfers
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.float16, mt.int64, mt.int32, mt.bool])
def test_tensor_round_trips(dtype):
    host_data = np.random.default_rng(0).standard_normal((3, 4)) * 5
    t = mt.tensor(host_data).to(dtype)
    for on_gpu in (t.to("cuda"), t.cuda(), t.to(mt.device("cuda", 0)), t.cuda(0)):
        assert on_gpu.device == mt.device("cuda:0") and on_gpu.is_cuda and on_gpu.dtype is dtype
        assert isinstance(on_gpu.array, cupy.ndarray) and on_gpu.array.device.id == 0
        back = on_gpu.cpu()
        assert back.device == mt.device("cpu") and back.dtype is dtype
        np.testing.assert_array_equal(back.numpy(), t.numpy())
    on_gpu = t.cuda()
    assert on_gpu.cuda() is on_gpu and on_gpu.to("cuda:0") is on_gpu  # nothing to do: self, as PyTorch
    view = mt.tensor(host_data).t()
    np.testing.assert_array_equal(view.cuda().cpu().numpy(), host_data.T)
    scalar = mt.tensor(2.5).cuda()
    assert scalar.item() == 2.5 and "device='cuda:0'" in repr(scalar)
    assert t.to("cuda", mt.float64).dtype is mt.float64


def test_gradients_flow_back_through_transfers():
    x = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = mt.tensor([0.5, 4.0, -1.0], device="cuda")
    (x.cuda() * w).sum().backward()
    assert x.grad.device == mt.device("cpu")
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 4.0, -1.0])
    y = mt.tensor([2.0, 3.0], device="cuda", requires_grad=True)
    (y.cpu() ** 2).sum().backward()
    assert y.grad.is_cuda
    np.testing.assert_array_equal(y.grad.cpu().numpy(), [4.0, 6.0])


def test_module_to_cuda_and_back():
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(4, 6), mt.nn.BatchNorm1d(6), mt.nn.ReLU(), mt.nn.Linear(6, 2))
    params = list(model.parameters())
    x = mt.tensor(np.random.default_rng(1).standard_normal((5, 4)), dtype=mt.float32)
    want = model(x).detach().numpy()
    assert model.to("cuda") is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]  # optimizers keep their tensors
    assert all(p.is_cuda for p in model.parameters()) and all(b.is_cuda for b in model.buffers())
    got = model(x.cuda())
    assert got.is_cuda
    np.testing.assert_allclose(got.detach().cpu().numpy(), want, rtol=1e-5, atol=1e-6)
    model.cpu()
    assert not any(p.is_cuda for p in model.parameters()) and not any(b.is_cuda for b in model.buffers())
    np.testing.assert_allclose(model(x).detach().numpy(), want, rtol=1e-5, atol=1e-6)
    model.cuda()
    assert all(p.is_cuda for p in model.parameters())


# ------------------------------------------------------------------------------------------- training
def mlp() -> mt.nn.Module:
    return mt.nn.Sequential(mt.nn.Flatten(), mt.nn.Linear(64, 32), mt.nn.ReLU(), mt.nn.Linear(32, 10))


def cnn() -> mt.nn.Module:
    return mt.nn.Sequential(mt.nn.Conv2d(1, 4, 3, padding=1), mt.nn.ReLU(), mt.nn.MaxPool2d(2),
                            mt.nn.Conv2d(4, 8, 3), mt.nn.ReLU(), mt.nn.Flatten(), mt.nn.Linear(8 * 2 * 2, 10))


def batch(n: int = 16) -> tuple[mt.Tensor, mt.Tensor]:
    rng = np.random.default_rng(2)
    return (mt.tensor(rng.standard_normal((n, 1, 8, 8)), dtype=mt.float32),
            mt.tensor(rng.integers(0, 10, n)))


def train_step(model: mt.nn.Module, x: mt.Tensor, y: mt.Tensor, device: str) -> tuple[float, list, list]:
    """One Adam step on ``device``: (loss, gradients, parameters after the step) on the host."""
    model.to(device)
    opt = mt.optim.Adam(model.parameters(), lr=1e-2)
    loss = mt.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
    opt.zero_grad()
    loss.backward()
    grads = [p.grad.cpu().numpy() for p in model.parameters()]
    opt.step()
    return loss.item(), grads, [p.detach().cpu().numpy() for p in model.parameters()]


@pytest.mark.parametrize("make", [mlp, cnn])
def test_one_training_step_agrees_on_cpu_and_cuda(make):
    mt.manual_seed(0)
    on_cpu = make()
    on_gpu = make()
    on_gpu.load_state_dict(on_cpu.state_dict())  # the same weights, made on the host
    x, y = batch()
    loss_cpu, grads_cpu, params_cpu = train_step(on_cpu, x, y, "cpu")
    loss_gpu, grads_gpu, params_gpu = train_step(on_gpu, x, y, "cuda")
    assert abs(loss_gpu - loss_cpu) <= 1e-5 * abs(loss_cpu)
    for g, w in zip(grads_gpu, grads_cpu):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * np.abs(w).max())
    for p, w in zip(params_gpu, params_cpu):
        np.testing.assert_allclose(p, w, rtol=1e-5, atol=1e-6)


def test_memory_stays_flat_over_1000_training_steps():
    mt.manual_seed(0)
    model = mlp().to("cuda")
    opt = mt.optim.Adam(model.parameters(), lr=1e-3)
    x, y = (t.cuda() for t in batch(64))
    pool = cupy.get_default_memory_pool()
    used = {}
    for step in range(1, 1001):
        opt.zero_grad()
        loss = mt.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()  # what a training loop logs: a float, not the graph
        if step in (10, 1000):
            used[step] = pool.used_bytes()
    assert used[1000] - used[10] <= 64 * 1024, used  # one leaked 512-byte block per step would be ~500 KiB


@pytest.mark.skipif(mt.cuda.device_count() < 2, reason="needs two GPUs")
def test_a_second_gpu_gets_its_own_arrays():
    b1 = get_backend("cuda", 1)
    assert cupy.cuda.runtime.getDevice() == 0
    made = [b1.zeros((3,), np.float32), b1.asarray(np.ones(3)), b1.normal((3,), 0.0, 1.0, np.float32),
            b1.matmul(b1.ones((2, 2), np.float32), b1.ones((2, 2), np.float32))]
    assert all(a.device.id == 1 for a in made) and cupy.cuda.runtime.getDevice() == 0
    t = mt.ones(3, device="cuda:1")
    assert t.array.device.id == 1 and t.to("cuda:0").array.device.id == 0
    np.testing.assert_array_equal(t.to("cuda:0").cpu().numpy(), np.ones(3, np.float32))
