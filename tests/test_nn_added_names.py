"""nn names real programs use that came late: BatchNorm3d, RReLU, Buffer, NLLLoss2d, Container (float64 NumPy
references written here; PyTorch parity marked ``torch``)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F
from minitensor.testing import gradcheck
from tests.helpers import assert_close, t64


def bn_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = -1
    return (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps) \
        * w.reshape(shape) + b.reshape(shape)


# ------------------------------------------------------------------------------------ BatchNorm3d
def test_batch_norm_3d_train_running_stats_and_eval():
    r = np.random.default_rng(0)
    m = nn.BatchNorm3d(3, momentum=0.3).double()
    w, b = r.standard_normal(3), r.standard_normal(3)
    with mt.no_grad():
        m.weight.copy_(mt.tensor(w))
        m.bias.copy_(mt.tensor(b))
    rm, rv = np.zeros(3), np.ones(3)
    for _ in range(2):
        x = r.standard_normal((2, 3, 2, 3, 4)) * 3 + 1
        assert_close(m(t64(x, False)), bn_ref(x, w, b, 1e-5), rtol=1e-9)
        axes = (0, 2, 3, 4)
        n = x.size // 3
        rm = 0.7 * rm + 0.3 * x.mean(axis=axes)
        rv = 0.7 * rv + 0.3 * x.var(axis=axes) * n / (n - 1)
    assert_close(m.running_mean, rm, rtol=1e-10)
    assert_close(m.running_var, rv, rtol=1e-10)
    assert int(m.num_batches_tracked) == 2
    m.eval()
    x = r.standard_normal((1, 3, 2, 2, 2))
    s = (1, 3, 1, 1, 1)
    ref = (x - rm.reshape(s)) / np.sqrt(rv.reshape(s) + 1e-5) * w.reshape(s) + b.reshape(s)
    assert_close(m(t64(x, False)), ref, rtol=1e-9)


def test_batch_norm_3d_cumulative_average_dims_and_repr():
    m = nn.BatchNorm3d(2, momentum=None).double()
    xs = [np.random.default_rng(i).standard_normal((2, 2, 1, 2, 3)) for i in range(3)]
    for x in xs:
        m(t64(x, False))
    assert_close(m.running_mean, np.mean([x.mean(axis=(0, 2, 3, 4)) for x in xs], axis=0), rtol=1e-10)
    assert_close(m.running_var, np.mean([x.var(axis=(0, 2, 3, 4), ddof=1) for x in xs], axis=0), rtol=1e-10)
    with pytest.raises(ValueError, match=r"^expected 5D input \(got 4D input\)$"):
        m(mt.randn(2, 2, 3, 3))
    assert repr(nn.BatchNorm3d(4)) == ("BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                       "track_running_stats=True)")
    assert list(nn.BatchNorm3d(4).state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                                    "num_batches_tracked"]


def test_batch_norm_3d_gradcheck():
    m = nn.BatchNorm3d(2).double()
    x = t64(np.random.default_rng(1).standard_normal((2, 2, 2, 1, 3)))
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [x, m.weight, m.bias])


@pytest.mark.torch
def test_batch_norm_3d_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((3, 4, 2, 3, 2))
    m, tm = nn.BatchNorm3d(4).double(), torch.nn.BatchNorm3d(4).double()
    for _ in range(2):
        assert_close(m(t64(x, False)), tm(torch.tensor(x)).detach().numpy(), rtol=1e-9)
    assert_close(m.running_var, tm.running_var.numpy(), rtol=1e-12)
    m.eval(), tm.eval()
    assert_close(m(t64(x, False)), tm(torch.tensor(x)).detach().numpy(), rtol=1e-9)


# ------------------------------------------------------------------------------------------ RReLU
def test_rrelu_module_eval_is_leaky_relu_at_the_mean_slope():
    x = np.random.default_rng(3).standard_normal((4, 5))
    m = nn.RReLU(0.1, 0.3).eval()
    assert_close(m(t64(x, False)), np.where(x > 0, x, 0.2 * x), rtol=1e-12)
    assert repr(nn.RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)"
    assert repr(nn.RReLU(inplace=True)) == "RReLU(lower=0.125, upper=0.3333333333333333, inplace=True)"


def test_rrelu_module_training_draws_one_slope_per_element():
    mt.manual_seed(0)
    x = t64(-np.abs(np.random.default_rng(4).standard_normal(2000)) - 0.1)  # all negative
    y = nn.RReLU(0.1, 0.3)(x)
    slope = (y / x).detach().numpy()
    assert slope.min() >= 0.1 and slope.max() <= 0.3
    assert len(np.unique(np.round(slope, 12))) > 1900  # one draw per element
    assert abs(slope.mean() - 0.2) < 0.01
    y.sum().backward()
    assert_close(x.grad, slope, rtol=1e-12)  # the gradient is the drawn slope
    pos = t64(np.array([0.5, 2.0]), False)
    assert_close(nn.RReLU()(pos), [0.5, 2.0])
    z = t64(np.array([-1.0, 1.0]), False)
    out = nn.RReLU(inplace=True).eval()(z)
    assert out is z and abs(float(z[0]) + (1 / 8 + 1 / 3) / 2) < 1e-12


# ----------------------------------------------------------------------------------------- Buffer
class _WithBuffers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.kept = nn.Buffer(mt.ones(2))
        self.scratch = nn.Buffer(mt.zeros(3), persistent=False)
        self.plain = mt.ones(1)  # a plain tensor stays a plain attribute


def test_buffer_assignment_registers_with_its_persistence():
    m = _WithBuffers()
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]
    assert "plain" not in dict(m.named_buffers())
    m.scratch = mt.full((3,), 2.0)  # a plain tensor under a buffer's name stays a buffer, still not persistent
    assert list(m.state_dict()) == ["kept"] and float(m.scratch[0]) == 2.0
    m.kept = nn.Buffer(mt.zeros(2), persistent=False)  # a Buffer brings its own persistence
    assert list(m.state_dict()) == []
    m.double()
    assert m.kept.dtype == mt.float64


def test_buffer_shares_memory_detached_and_keeps_requires_grad():
    t = mt.ones(2, requires_grad=True)
    b = nn.Buffer(t * 1)
    assert isinstance(b, mt.Tensor) and isinstance(b, nn.Buffer) and b.persistent
    assert b.grad_fn is None and b.requires_grad
    base = mt.zeros(2)
    b = nn.Buffer(base)
    base.add_(1)
    assert float(b[0]) == 1.0 and b._version == base._version
    assert nn.Buffer().shape == (0,)
    with pytest.raises(TypeError, match="Tensor"):
        nn.Buffer(np.ones(2))  # type: ignore[arg-type]
    m = nn.Module()
    m.w = nn.Parameter(mt.ones(1))
    with pytest.raises(TypeError, match="as parameter 'w'"):
        m.w = nn.Buffer(mt.ones(1))


@pytest.mark.torch
def test_buffer_state_dict_matches_torch():
    torch = pytest.importorskip("torch")

    class T(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.kept = torch.nn.Buffer(torch.ones(2))
            self.scratch = torch.nn.Buffer(torch.zeros(3), persistent=False)

    assert list(T().state_dict()) == list(_WithBuffers().state_dict())
    assert [n for n, _ in T().named_buffers()] == [n for n, _ in _WithBuffers().named_buffers()]


# ------------------------------------------------------------------------------ NLLLoss2d, Container
def test_nll_loss_2d_is_nll_loss_and_container_adds_children():
    r = np.random.default_rng(5)
    logp = r.standard_normal((2, 3, 2, 2))
    target = r.integers(0, 3, (2, 2, 2))
    loss = nn.NLLLoss2d(reduction="sum")(t64(logp, False), mt.tensor(target))
    ref = -np.take_along_axis(logp, target[:, None], axis=1).sum()
    assert_close(loss, ref, rtol=1e-12)
    assert isinstance(nn.NLLLoss2d(), nn.NLLLoss)
    c = nn.Container(fc=nn.Linear(2, 3), act=nn.ReLU())
    assert list(dict(c.named_children())) == ["fc", "act"]
    assert list(c.state_dict()) == ["fc.weight", "fc.bias"]
