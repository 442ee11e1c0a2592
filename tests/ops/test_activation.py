"""Activations: forward against float64 NumPy references, gradients by finite differences (gradcheck)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.backends import get_backend
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=30, deadline=None)
shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


def _erf_ref(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid_ref(x):
    return 1.0 / (1.0 + np.exp(-x))


# Each row: the public function (with its parameters bound) and an independent float64 reference.
REFERENCES = {
    "relu": (F.relu, lambda x: np.where(x > 0, x, 0.0)),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    "leaky_relu_negative_slope": (lambda t: F.leaky_relu(t, -0.3), lambda x: np.where(x > 0, x, -0.3 * x)),
    "elu": (lambda t: F.elu(t, 1.5), lambda x: np.where(x > 0, x, 1.5 * (np.exp(x) - 1))),
    "elu_negative_alpha": (lambda t: F.elu(t, -0.5), lambda x: np.where(x > 0, x, -0.5 * (np.exp(x) - 1))),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf_ref(x / math.sqrt(2)))),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (F.silu, lambda x: x * _sigmoid_ref(x)),
    "softplus": (F.softplus, lambda x: np.where(x > 20, x, np.log1p(np.exp(x)))),
    "softplus_beta": (lambda t: F.softplus(t, beta=2.0, threshold=3.0),
                      lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    "sigmoid": (F.sigmoid, _sigmoid_ref),
    "tanh": (F.tanh, np.tanh),
    "hardtanh": (lambda t: F.hardtanh(t, -0.5, 1.5), lambda x: np.minimum(np.maximum(x, -0.5), 1.5)),
    "relu6": (F.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
}
_SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
REFERENCES.update({
    "celu": (lambda t: F.celu(t, 1.5), lambda x: np.where(x > 0, x, 1.5 * (np.exp(x / 1.5) - 1))),
    "celu_negative_alpha": (lambda t: F.celu(t, -2.0), lambda x: np.where(x > 0, x, -2.0 * (np.exp(x / -2.0) - 1))),
    "selu": (F.selu, lambda x: _SELU[1] * np.where(x > 0, x, _SELU[0] * (np.exp(x) - 1))),
    "mish": (F.mish, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "logsigmoid": (F.logsigmoid, lambda x: -np.logaddexp(0, -x)),
    "softsign": (F.softsign, lambda x: x / (1 + np.abs(x))),
    "threshold": (lambda t: F.threshold(t, 0.7, -2.0), lambda x: np.where(x > 0.7, x, -2.0)),
    "hardshrink": (F.hardshrink, lambda x: np.where(np.abs(x) > 0.5, x, 0.0)),
    "softshrink": (lambda t: F.softshrink(t, 0.8), lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.8, 0)),
    "tanhshrink": (F.tanhshrink, lambda x: x - np.tanh(x)),
})
# Points where the function has a kink: finite differences are meaningless within eps of them.
KINKS = {"relu": [0.0], "leaky_relu": [0.0], "leaky_relu_negative_slope": [0.0], "elu": [0.0],
         "elu_negative_alpha": [0.0], "softplus": [20.0], "softplus_beta": [1.5], "hardtanh": [-0.5, 1.5],
         "relu6": [0.0, 6.0], "celu": [0.0], "celu_negative_alpha": [0.0], "selu": [0.0],
         "hardsigmoid": [-3.0, 3.0], "hardswish": [-3.0, 3.0], "threshold": [0.7], "hardshrink": [-0.5, 0.5],
         "softshrink": [-0.8, 0.8]}


def _away_from_kinks(x, kinks, margin=1e-3):
    for k in kinks:
        near = np.abs(x - k) < margin
        x = np.where(near, k + 10 * margin, x)
    return x


@pytest.mark.parametrize("name", sorted(REFERENCES))
@SETTINGS
@given(shape=shapes, seed=st.integers(0, 2 ** 16))
def test_forward_matches_float64_reference(name, shape, seed):
    fn, ref = REFERENCES[name]
    x = np.random.default_rng(seed).normal(0, 4, size=shape)
    y64 = fn(mt.tensor(x, dtype=mt.float64)).numpy()
    np.testing.assert_allclose(y64, ref(x), rtol=1e-12, atol=1e-12)
    y32 = fn(mt.tensor(x, dtype=mt.float32))
    assert y32.dtype == mt.float32
    np.testing.assert_allclose(y32.numpy(), ref(x.astype(np.float32).astype(np.float64)), rtol=2e-6,
                               atol=2e-6)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradients_match_finite_differences(name):
    fn, _ = REFERENCES[name]
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(0, 3, size=40), [-7.5, -2.0, 2.0, 7.5, 25.0]])
    x = _away_from_kinks(x, KINKS.get(name, []))
    gradcheck(fn, (mt.tensor(x, dtype=mt.float64, requires_grad=True),))


@pytest.mark.parametrize("name, expected", [("relu", [0.0, 0.0, 1.0]), ("leaky_relu", [0.2, 0.2, 1.0]),
                                            ("elu", [1.5, 1.5 * math.exp(-0.5), 1.0]),
                                            ("hardtanh", [1.0, 0.0, 0.0]),
                                            ("celu", [1.0, math.exp(-0.5 / 1.5), 1.0])])
def test_gradient_at_the_kink_follows_pytorch(name, expected):
    """PyTorch's one-sided choices at x = 0: relu 0, leaky_relu the slope, elu alpha; hardtanh's
    gradient is 0 at its ends (-0.5 and 1.5 here)."""
    fn, _ = REFERENCES[name]
    x = mt.tensor([0.0, -0.5, 1.5], dtype=mt.float64, requires_grad=True)
    fn(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15)


def test_erf_matches_math_erf_to_float64_precision():
    B = get_backend("cpu")
    x = np.concatenate([np.linspace(-8, 8, 20001), np.geomspace(1e-300, 30, 2000),
                        -np.geomspace(1e-300, 30, 2000), [0.0, 0.46875, -0.46875, 4.0, -4.0, 4.0000001]])
    ref = _erf_ref(x)
    got = B.erf(x)
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=0)
    special = B.erf(np.array([np.inf, -np.inf, np.nan, -0.0]))
    assert special[0] == 1.0 and special[1] == -1.0 and np.isnan(special[2])
    assert special[3] == 0.0 and np.signbit(special[3])
    x32 = np.concatenate([x, [np.inf, -np.inf, 1e30, -1e30]]).astype(np.float32)
    got32 = B.erf(x32)
    assert got32.dtype == np.float32
    assert np.abs(got32).max() <= 1.0
    np.testing.assert_allclose(got32, _erf_ref(x32.astype(np.float64)), rtol=4e-7, atol=1e-37)
    got16 = B.erf(np.array([0.5, -2.0], dtype=np.float16))
    assert got16.dtype == np.float16
    np.testing.assert_allclose(got16, [math.erf(0.5), math.erf(-2.0)], rtol=1e-3)


def _softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_softmax_and_log_softmax_forward(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape) + dim).normal(0, 5, size=shape)
    axis = dim % len(shape)
    p = F.softmax(mt.tensor(x, dtype=mt.float64), dim).numpy()
    np.testing.assert_allclose(p, _softmax_ref(x, axis), rtol=1e-12, atol=1e-15)
    logp = F.log_softmax(mt.tensor(x, dtype=mt.float64), dim=dim).numpy()
    naive = x - np.log(np.exp(x).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(logp, naive, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_gradients(fn, dim):
    x = np.random.default_rng(dim + 5).normal(0, 2, size=(3, 4, 5))
    gradcheck(lambda t: fn(t, dim), (mt.tensor(x, dtype=mt.float64, requires_grad=True),))


def test_softmax_is_stable_at_huge_logits_in_float32():
    x = mt.tensor([[1000.0, -1000.0, 0.0], [1000.0, 1000.0, -1000.0]], requires_grad=True)
    p = F.softmax(x, dim=1)
    np.testing.assert_allclose(p.detach().numpy(), [[1, 0, 0], [0.5, 0.5, 0]], atol=1e-7)
    logp = F.log_softmax(x, dim=1)
    log2 = math.log(2)
    np.testing.assert_allclose(logp.detach().numpy(), [[0, -2000, -1000], [-log2, -log2, -2000 - log2]], rtol=1e-6)
    (logp[:, 0].sum() + p[:, 1].sum()).backward()
    assert np.isfinite(x.grad.numpy()).all()
    assert x.dtype == p.dtype == logp.dtype == x.grad.dtype == mt.float32


def test_softmax_dtype_argument_casts_first():
    x = mt.tensor([[1.0, 2.0, 3.0]])
    assert F.softmax(x, 1, dtype=mt.float64).dtype == mt.float64


def test_softmax_refuses_a_dim_out_of_range():
    """(Without ``dim``: PyTorch's deprecation warning and implicit dim, tests/test_implicit_dims.py.)"""
    with pytest.raises(IndexError):
        F.softmax(mt.randn(2, 3), dim=2)


def test_gelu_rejects_an_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(mt.randn(3), approximate="erf")


def test_hardtanh_rejects_min_above_max():
    with pytest.raises(ValueError, match="min_val"):
        F.hardtanh(mt.randn(3), 2.0, 1.0)


def test_extreme_inputs_stay_finite_in_float32():
    x = mt.tensor([-1000.0, -80.0, 0.0, 80.0, 1000.0], requires_grad=True)
    for fn in (F.sigmoid, F.silu, F.softplus, F.gelu, lambda t: F.gelu(t, approximate="tanh"), F.elu, F.tanh):
        x.grad = None
        y = fn(x)
        y.sum().backward()
        assert np.isfinite(y.detach().numpy()).all(), fn
        assert np.isfinite(x.grad.numpy()).all(), fn
    np.testing.assert_allclose(F.softplus(x).detach().numpy(), [0, 0, math.log(2), 80, 1000], atol=1e-30,
                               rtol=1e-6)


@pytest.mark.parametrize("fn, kwargs", [(F.relu, {}), (F.leaky_relu, {"negative_slope": 0.1}),
                                        (F.elu, {"alpha": 0.7}), (F.hardtanh, {}), (F.relu6, {}),
                                        (F.silu, {})])
def test_inplace_writes_into_the_input(fn, kwargs):
    x = mt.tensor(np.linspace(-3, 8, 12))
    expected = fn(x, **kwargs).numpy().copy()
    out = fn(x, inplace=True, **kwargs)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), expected)


@pytest.mark.parametrize("fn", [lambda t: F.silu(t, inplace=True),
                                lambda t: F.leaky_relu(t, -0.5, inplace=True),
                                lambda t: F.elu(t, -0.5, inplace=True),
                                lambda t: F.relu(t, inplace=True),
                                lambda t: F.elu_(t, 2.0)])
def test_inplace_keeps_correct_gradients(fn):
    """In-place ops whose backward needs x must not read the overwritten memory."""
    x = np.random.default_rng(3).normal(0, 2, size=20)
    x = _away_from_kinks(x, [0.0])
    gradcheck(lambda t: fn(t * 1.0), (mt.tensor(x, dtype=mt.float64, requires_grad=True),))


def test_inplace_underscore_aliases():
    x = mt.tensor([-1.0, 2.0])
    assert F.relu_(x) is x and x.tolist() == [0.0, 2.0]
    y = mt.tensor([-1.0, 2.0])
    F.leaky_relu_(y, 0.5)
    assert y.tolist() == [-0.5, 2.0]
    z = mt.tensor([-3.0, 2.0])
    F.hardtanh_(z)
    assert z.tolist() == [-1.0, 1.0]


def test_saves_output_not_input_where_it_suffices():
    x = mt.randn(4, requires_grad=True)
    for fn in (F.relu, F.sigmoid, F.tanh, F.elu, F.leaky_relu, lambda t: F.softmax(t, 0)):
        y = fn(x)
        saved, = y.grad_fn.saved_arrays
        assert saved is y.array


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_leaky_relu_without_where_matches_the_where_form_exactly(dtype):
    """The backend's leaky_relu (max / min of x and s x) and its backward (gy (s + (1 - s) [v > 0]))
    give the where-form's values bit for bit, for slopes in and out of [0, 1] and at 0, +-inf and NaN."""
    B = get_backend("cpu")
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30])
    v = np.concatenate([rng.standard_normal(200), special]).astype(dtype)
    gy = np.concatenate([rng.standard_normal(200), [np.inf, -np.inf, np.nan, 0.0, 1.0, -1.0, 2.0]]).astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        for slope in [0.0, 0.01, 0.2, 1 / 3, 0.5, 0.999, 1.0, 1.5, 7.0, -0.3, *rng.uniform(0, 1, 50)]:
            slope = float(slope)
            y = B.leaky_relu(v, slope)
            assert y.dtype == v.dtype
            np.testing.assert_array_equal(y, np.where(v > 0, v, v * slope), err_msg=f"slope {slope}")
            gx = B.leaky_relu_backward(gy, v, slope)
            assert gx.dtype == gy.dtype
            np.testing.assert_array_equal(gx, np.where(v > 0, gy, gy * slope), err_msg=f"slope {slope}")
