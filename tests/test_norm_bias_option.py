"""PyTorch 2.x's keyword-only ``bias`` of the batch norms (and lazy ones) and the norms' reprs with it: the
weight stays, the bias is None, forward is x_hat * weight; LayerNorm's repr shows its bias too."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

REPRS = {
    "BatchNorm1d(3, bias=False)":
        "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)",
    "BatchNorm2d(4)": "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
    "BatchNorm3d(2, affine=False)":
        "BatchNorm3d(2, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)",
    "InstanceNorm2d(3)":
        "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)",
    "InstanceNorm1d(3, affine=True, bias=False)":
        "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=False)",
    "LayerNorm(4)": "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)",
    "LayerNorm([2, 3], bias=False)": "LayerNorm((2, 3), eps=1e-05, elementwise_affine=True, bias=False)",
}


@pytest.mark.parametrize("expr", sorted(REPRS))
def test_norm_reprs(expr):
    assert repr(eval("mt.nn." + expr)) == REPRS[expr]


@pytest.mark.torch
@pytest.mark.parametrize("expr", sorted(REPRS))
def test_norm_reprs_match_pytorch(expr):
    torch = pytest.importorskip("torch")  # noqa: F841 (the eval below reads it)
    assert repr(eval("mt.nn." + expr)) == repr(eval("torch.nn." + expr))


@pytest.mark.parametrize("cls, shape", [("BatchNorm1d", (5, 3)), ("BatchNorm2d", (4, 3, 2, 2)),
                                        ("BatchNorm3d", (2, 3, 2, 2, 2)), ("LazyBatchNorm2d", (4, 3, 2, 2))])
def test_batch_norm_without_bias(cls, shape):
    m = getattr(mt.nn, cls)(bias=False) if cls.startswith("Lazy") else getattr(mt.nn, cls)(3, bias=False)
    x = np.random.default_rng(0).standard_normal(shape)
    y = m.double()(mt.tensor(x))
    assert [n for n, _ in m.named_parameters()] == ["weight"] and m.bias is None
    axes = tuple(d for d in range(len(shape)) if d != 1)
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    w = m.weight.detach().numpy().reshape([-1 if d == 1 else 1 for d in range(len(shape))])
    np.testing.assert_allclose(y.detach().numpy(), (x - mean) / np.sqrt(var + 1e-5) * w, rtol=1e-10, atol=1e-12)
    y.sum().backward()
    assert m.weight.grad is not None
