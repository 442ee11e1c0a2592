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
    assert repr(nn.BatchNorm3d(4)) == "BatchNorm3d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
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
