"""nn.init: gains and fans (known values), the statistics of each initialiser, in-place and no-grad
behaviour, reproducibility, and every layer's default initialisation (PyTorch's)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn import init


def npa(t):
    return np.array(t.detach().numpy(), dtype=np.float64)


def check_uniform(t, bound):
    """Entries within [-bound, bound], filling it: the max is near the bound and std near bound/sqrt(3)."""
    a = npa(t)
    assert np.abs(a).max() <= bound * (1 + 1e-6)
    assert np.abs(a).max() > 0.98 * bound
    assert abs(a.std() / (bound / math.sqrt(3)) - 1) < 0.03
    assert abs(a.mean()) < 0.03 * bound


def check_normal(t, std, mean=0.0):
    a = npa(t)
    assert abs(a.std() / std - 1) < 0.03
    assert abs(a.mean() - mean) < 0.03 * std
    assert np.abs(a - mean).max() > 3 * std  # unbounded tails, unlike the uniform


# -------------------------------------------------------------------------------- gains and fans
@pytest.mark.parametrize("name, param, gain", [
    ("linear", None, 1.0), ("conv2d", None, 1.0), ("conv_transpose2d", None, 1.0), ("sigmoid", None, 1.0),
    ("tanh", None, 5 / 3), ("relu", None, math.sqrt(2)), ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))),
    ("leaky_relu", 0.2, math.sqrt(2 / 1.04)), ("leaky_relu", math.sqrt(5), math.sqrt(1 / 3)), ("selu", None, 0.75),
])
def test_calculate_gain(name, param, gain):
    assert init.calculate_gain(name, param) == pytest.approx(gain, rel=1e-12)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fan_in_and_fan_out():
    assert init._calculate_fan_in_and_fan_out(mt.empty(7, 5)) == (5, 7)
    assert init._calculate_fan_in_and_fan_out(mt.empty(8, 3, 3, 5)) == (45, 120)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(mt.empty(4))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(mt.empty(3, 3), mode="fan_avg")


# ------------------------------------------------------------------------------------ initialisers
def test_uniform_normal_constant():
    t = mt.empty(400, 500)
    assert init.uniform_(t, -2.0, 3.0) is t
    a = npa(t)
    assert a.min() >= -2 and a.max() <= 3 and abs(a.mean() - 0.5) < 0.02 and abs(a.std() - 5 / math.sqrt(12)) < 0.02
    check_normal(init.normal_(t, 1.5, 0.5), 0.5, 1.5)
    assert np.all(npa(init.constant_(t, 0.25)) == 0.25)
    assert np.all(npa(init.ones_(t)) == 1) and np.all(npa(init.zeros_(t)) == 0)
    e = init.eye_(mt.empty(3, 4))
    assert np.array_equal(npa(e), np.eye(3, 4))


def test_kaiming_uniform_and_normal():
    t = mt.empty(600, 300)
    check_uniform(init.kaiming_uniform_(t), math.sqrt(6 / 300))  # a=0: leaky_relu with slope 0, gain sqrt(2)
    check_uniform(init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"), math.sqrt(6 / 600))
    check_normal(init.kaiming_normal_(t, nonlinearity="relu"), math.sqrt(2 / 300))
    check_normal(init.kaiming_normal_(t, a=0.2, mode="fan_out"), math.sqrt(2 / 1.04) / math.sqrt(600))
    conv = mt.empty(64, 32, 3, 3)
    check_uniform(init.kaiming_uniform_(conv, nonlinearity="relu"), math.sqrt(6 / (32 * 9)))


def test_xavier():
    t = mt.empty(500, 300)
    check_uniform(init.xavier_uniform_(t), math.sqrt(6 / 800))
    check_uniform(init.xavier_uniform_(t, gain=init.calculate_gain("tanh")), 5 / 3 * math.sqrt(6 / 800))
    check_normal(init.xavier_normal_(t, gain=2.0), 2 * math.sqrt(2 / 800))


def test_trunc_normal():
    t = mt.empty(300, 300)
    a = npa(init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    assert a.min() < -0.99 and a.max() > 1.49  # the whole interval is used
    # mean of N(0.5, 1) truncated to [-1, 1.5]: mu + (pdf(alpha) - pdf(beta)) / (cdf(beta) - cdf(alpha))
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    expected = 0.5 + (pdf(-1.5) - pdf(1.0)) / (cdf(1.0) - cdf(-1.5))
    assert abs(a.mean() - expected) < 0.01
    with pytest.raises(ValueError):
        init.trunc_normal_(t, a=1.0, b=0.0)


@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (4, 2, 3)])
def test_orthogonal(shape):
    t = init.orthogonal_(mt.empty(*shape), gain=2.0)
    a = npa(t).reshape(shape[0], -1)
    rows, cols = a.shape
    gram = a @ a.T if rows <= cols else a.T @ a
    np.testing.assert_allclose(gram, 4 * np.eye(min(rows, cols)), atol=1e-5)
    assert t.dtype == mt.float32
    with pytest.raises(ValueError):
        init.orthogonal_(mt.empty(3))


def test_init_is_in_place_without_grad_and_keeps_dtype():
    p = nn.Parameter(mt.zeros(20, 10, dtype=mt.float64))
    array = p.array
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_, init.ones_,
               init.orthogonal_, init.trunc_normal_):
        out = fn(p)
        assert out is p and p.array is array and p.dtype == mt.float64
        assert p.grad_fn is None and p.is_leaf and p.requires_grad
    half = init.kaiming_uniform_(mt.empty(8, 8, dtype=mt.float16))
    assert half.dtype == mt.float16


def test_init_uses_the_seeded_generator():
    mt.manual_seed(123)
    a = npa(init.kaiming_uniform_(mt.empty(5, 5)))
    b = npa(init.normal_(mt.empty(5)))
    mt.manual_seed(123)
    assert np.array_equal(a, npa(init.kaiming_uniform_(mt.empty(5, 5))))
    assert np.array_equal(b, npa(init.normal_(mt.empty(5))))
    mt.manual_seed(7)
    first = npa(nn.Linear(3, 3).weight)
    mt.manual_seed(7)
    assert np.array_equal(first, npa(nn.Linear(3, 3).weight))


def test_empty_tensor_warns():
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(mt.empty(0, 3))


# ---------------------------------------------------------------------------------- layer defaults
def test_linear_default_init():
    m = nn.Linear(1000, 1000)
    bound = 1 / math.sqrt(1000)  # kaiming_uniform_(a=sqrt(5)): gain sqrt(1/3) * sqrt(3) / sqrt(fan_in)
    check_uniform(m.weight, bound)
    b = npa(m.bias)
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound
    assert m.weight.dtype == mt.float32


@pytest.mark.parametrize("module, fan_in", [
    (nn.Conv2d(64, 128, 3), 64 * 9),
    (nn.Conv2d(64, 128, 3, groups=4), 16 * 9),
    (nn.ConvTranspose2d(128, 64, 4), 64 * 16),  # weight (in, out, k, k): fan_in from dim 1, as PyTorch
])
def test_conv_default_init(module, fan_in):
    check_uniform(module.weight, 1 / math.sqrt(fan_in))
    assert np.abs(npa(module.bias)).max() <= 1 / math.sqrt(fan_in)


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_recurrent_default_init(cls):
    m = cls(50, 400, num_layers=2, bidirectional=True)
    bound = 1 / math.sqrt(400)
    for name, p in m.named_parameters():
        a = npa(p)
        assert np.abs(a).max() <= bound, name
    check_uniform(m.weight_hh_l1_reverse, bound)
    cell = nn.LSTMCell(10, 100)
    assert max(np.abs(npa(p)).max() for p in cell.parameters()) <= 0.1


def test_embedding_and_norm_default_init():
    e = nn.Embedding(2000, 100, padding_idx=3)
    w = npa(e.weight)
    assert not w[3].any()
    check_normal(mt.tensor(np.delete(w, 3, axis=0)), 1.0)
    bn = nn.BatchNorm2d(5)
    assert np.all(npa(bn.weight) == 1) and np.all(npa(bn.bias) == 0)
    assert np.all(npa(bn.running_mean) == 0) and np.all(npa(bn.running_var) == 1)
    assert int(bn.num_batches_tracked) == 0 and bn.num_batches_tracked.dtype == mt.int64
    ln = nn.LayerNorm((3, 4))
    assert np.all(npa(ln.weight) == 1) and np.all(npa(ln.bias) == 0) and ln.weight.shape == (3, 4)


def test_reset_parameters_redraws_and_batch_norm_resets_stats():
    m = nn.Linear(20, 20)
    before = npa(m.weight)
    m.reset_parameters()
    assert not np.array_equal(before, npa(m.weight))
    bn = nn.BatchNorm1d(3)
    bn(mt.randn(8, 3) + 5)
    assert int(bn.num_batches_tracked) == 1 and npa(bn.running_mean).min() > 0.1
    bn.reset_running_stats()
    assert int(bn.num_batches_tracked) == 0 and not npa(bn.running_mean).any()
