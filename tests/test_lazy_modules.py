"""Lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*): UninitializedParameter /
UninitializedBuffer, shape inference on the first forward, the class switch, state dicts, and the errors."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn
from minitensor.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from minitensor.nn.modules.lazy import LazyModuleMixin
from tests.helpers import as_np, assert_close


def test_lazy_linear_infers_in_features_and_becomes_linear():
    layer = nn.LazyLinear(3)
    weight = layer.weight
    assert isinstance(weight, UninitializedParameter) and isinstance(weight, nn.Parameter)
    assert layer.has_uninitialized_params() and repr(weight) == "<UninitializedParameter>"
    assert repr(layer) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    x = mt.randn(4, 2, 5)
    y = layer(x)
    assert type(layer) is nn.Linear and layer.in_features == 5 and tuple(y.shape) == (4, 2, 3)
    assert layer.weight is weight and type(weight) is nn.Parameter and tuple(weight.shape) == (3, 5)
    assert not layer._forward_pre_hooks  # the inference hook removed itself
    bound = 1 / math.sqrt(5)  # Linear's own init ran on the materialized weight
    assert np.abs(as_np(layer.weight)).max() <= bound and np.abs(as_np(layer.bias)).max() <= bound
    assert_close(y, as_np(x) @ as_np(layer.weight).T + as_np(layer.bias), rtol=1e-5, atol=1e-6)
    layer(x).sum().backward()
    assert tuple(layer.weight.grad.shape) == (3, 5)
    assert repr(layer) == "Linear(in_features=5, out_features=3, bias=True)"


def test_no_bias_and_dtype_moves_before_the_first_forward():
    layer = nn.LazyLinear(2, bias=False).double()
    assert layer.bias is None and layer.weight.dtype == mt.float64 and is_lazy(layer.weight)
    layer(mt.randn(1, 3, dtype=mt.float64))
    assert layer.weight.dtype == mt.float64 and list(dict(layer.named_parameters())) == ["weight"]
    p = UninitializedParameter(dtype=mt.float64)
    assert p.dtype == mt.float64 and p.requires_grad and p.float().dtype == mt.float32 and p.to(mt.float64) is p


def test_using_uninitialized_data_raises():
    p = nn.LazyLinear(3).weight
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        p + 1
    with pytest.raises(ValueError, match="uninitialized parameter"):
        F.linear(mt.ones(2, 2), p)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        p.share_memory_()
    with pytest.raises(ValueError, match="uninitialized parameter"):
        p.sum()
    b = UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    b.materialize((2,))
    assert type(b) is mt.Tensor and tuple(b.shape) == (2,)


@pytest.mark.parametrize("cls, base, dims", [(nn.LazyConv1d, nn.Conv1d, 1), (nn.LazyConv2d, nn.Conv2d, 2),
                                              (nn.LazyConv3d, nn.Conv3d, 3)])
def test_lazy_conv(cls, base, dims):
    conv = cls(4, 3, padding=1, bias=True)
    assert repr(conv).startswith(f"{cls.__name__}(0, 4, kernel_size=")
    x = mt.randn(2, 6, *(5,) * dims)
    y = conv(x)
    assert type(conv) is base and conv.in_channels == 6 and tuple(conv.weight.shape) == (4, 6) + (3,) * dims
    conv_fn = (F.conv1d, F.conv2d, F.conv3d)[dims - 1]
    assert_close(y, as_np(conv_fn(x, conv.weight, conv.bias, padding=1)), rtol=1e-6)
    unbatched = cls(2, 1, groups=2)
    unbatched(mt.randn(4, *(3,) * dims))  # (C, *spatial): in_channels from dim 0
    assert unbatched.in_channels == 4 and tuple(unbatched.weight.shape) == (2, 2) + (1,) * dims
    with pytest.raises(RuntimeError, match=f"Expected {dims + 1}D \\(unbatched\\) or {dims + 2}D \\(batched\\)"):
        cls(2, 1)(mt.randn(*(2,) * (dims + 3)))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        cls(2, 1, groups=2)(mt.randn(1, 3, *(3,) * dims))


def test_lazy_conv_transpose():
    conv = nn.LazyConvTranspose2d(6, 3, stride=2, groups=3, bias=False)
    y = conv(mt.randn(1, 3, 4, 4))
    assert type(conv) is nn.ConvTranspose2d and tuple(conv.weight.shape) == (3, 2, 3, 3)
    assert tuple(y.shape) == (1, 6, 9, 9) and conv.bias is None
    assert type(nn.LazyConvTranspose1d(2, 2)) is nn.LazyConvTranspose1d


def test_lazy_batch_norm():
    bn = nn.LazyBatchNorm2d(momentum=0.5)
    assert is_lazy(bn.running_mean) and is_lazy(bn.weight) and bn.num_batches_tracked.item() == 0
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    x = mt.randn(4, 3, 2, 2) * 2 + 1
    y = bn(x)
    assert type(bn) is nn.BatchNorm2d and bn.num_features == 3 and bn.num_batches_tracked.item() == 1
    xs = as_np(x).astype(np.float64)
    assert_close(bn.running_mean, 0.5 * xs.mean((0, 2, 3)), rtol=1e-5, atol=1e-6)
    ref = (xs - xs.mean((0, 2, 3), keepdims=True)) / np.sqrt(xs.var((0, 2, 3), keepdims=True) + 1e-5)
    assert_close(y, ref, rtol=1e-4, atol=1e-5)
    plain = nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    plain(mt.randn(5, 2))
    assert type(plain) is nn.BatchNorm1d and plain.weight is None and plain.running_mean is None


def test_state_dicts():
    lazy = nn.LazyLinear(3)
    saved = lazy.state_dict()
    assert all(is_lazy(v) for v in saved.values())
    source = nn.Linear(4, 3)
    target = nn.LazyLinear(3)
    target.load_state_dict(source.state_dict())
    assert not target.has_uninitialized_params() and tuple(target.weight.shape) == (3, 4)
    assert_close(target.weight, as_np(source.weight))
    x = mt.randn(2, 4)
    assert_close(target(x), as_np(source(x)))
    assert type(target) is nn.Linear and target.in_features == 4
    with pytest.raises(AssertionError, match="in_features inferred from input: 5"):
        other = nn.LazyLinear(3)
        other.load_state_dict(source.state_dict())
        other(mt.randn(2, 5))


def test_deepcopy_and_containers():
    model = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(2))
    twin = copy.deepcopy(model)
    assert is_lazy(twin[0].weight) and twin[0].weight is not model[0].weight
    out = model(mt.randn(3, 5))
    assert tuple(out.shape) == (3, 2) and tuple(model[2].weight.shape) == (2, 8)
    assert is_lazy(twin[0].weight)  # the copy is still lazy, and infers its own shapes
    assert tuple(twin(mt.randn(1, 7)).shape) == (1, 2) and type(twin[0]) is nn.Linear and twin[0].in_features == 7
    assert model[0].in_features == 5


class Incomplete(LazyModuleMixin, nn.Module):
    def __init__(self):
        super().__init__()
        self.w = UninitializedParameter()

    def initialize_parameters(self, x):
        pass

    def forward(self, x):
        return x


def test_a_module_left_uninitialized_raises():
    with pytest.raises(RuntimeError, match="module Incomplete has not been fully initialized"):
        Incomplete()(mt.ones(1))


@pytest.mark.torch
def test_matches_torch():
    torch = pytest.importorskip("torch")
    pairs = [(nn.LazyLinear(3), torch.nn.LazyLinear(3), (2, 5)),
             (nn.LazyConv2d(4, 3, stride=2), torch.nn.LazyConv2d(4, 3, stride=2), (1, 2, 6, 6)),
             (nn.LazyConvTranspose1d(4, 2), torch.nn.LazyConvTranspose1d(4, 2), (1, 2, 5)),
             (nn.LazyConv3d(2, 1, bias=False), torch.nn.LazyConv3d(2, 1, bias=False), (2, 3, 2, 2, 2))]
    for ours, theirs, shape in pairs:
        assert repr(ours) == repr(theirs)
        assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        theirs(torch.tensor(x))
        ours(mt.tensor(x))
        assert repr(ours) == repr(theirs) and type(ours).__name__ == type(theirs).__name__
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
        ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
        assert_close(ours(mt.tensor(x)), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError) as ours_err:
        nn.LazyLinear(2).weight.shape
    with pytest.raises(RuntimeError) as theirs_err:
        torch.nn.LazyLinear(2).weight.shape
    assert str(ours_err.value) == str(theirs_err.value)
    assert repr(nn.LazyLinear(2).weight) == repr(torch.nn.LazyLinear(2).weight)
    bn, tbn = nn.LazyBatchNorm1d(), torch.nn.LazyBatchNorm1d()
    assert list(bn.state_dict()) == list(tbn.state_dict())


def test_public_names():
    assert nn.UninitializedParameter is UninitializedParameter and nn.UninitializedBuffer is UninitializedBuffer
    assert not hasattr(nn, "LazyModuleMixin")  # torch.nn.modules.lazy only, as PyTorch


def test_optimizer_made_before_the_first_forward_steps_the_materialized_parameters():
    layer = nn.LazyLinear(2)
    opt = mt.optim.SGD(layer.parameters(), lr=0.5)
    x = mt.randn(3, 4)
    layer(x).sum().backward()
    before = as_np(layer.weight).copy()
    opt.step()
    assert_close(layer.weight, before - 0.5 * as_np(x).sum(0)[None, :].repeat(2, 0), rtol=1e-5, atol=1e-6)


def test_lazy_instance_norm_takes_the_lazy_defaults_and_becomes_instance_norm():
    x = mt.arange(96.0).reshape(2, 3, 4, 4)
    m = mt.nn.LazyInstanceNorm2d()
    y = m(x)
    assert type(m) is mt.nn.InstanceNorm2d and m.num_features == 3 and m.affine and m.track_running_stats
    assert m.weight.shape == (3,) and m.running_mean.shape == (3,)
    xs = x.numpy().astype(np.float64)
    mean, var = xs.mean(axis=(2, 3), keepdims=True), xs.var(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(y.detach().numpy(), (xs - mean) / np.sqrt(var + 1e-5), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * mean.mean(axis=0).ravel(), rtol=1e-6)
    plain = mt.nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    plain(mt.ones(2, 5, 7))
    assert plain.weight is None and plain.running_mean is None and type(plain) is mt.nn.InstanceNorm1d


@pytest.mark.torch
def test_lazy_instance_norms_as_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for dims in (1, 2, 3):
        ours, theirs = getattr(mt.nn, f"LazyInstanceNorm{dims}d")(), getattr(torch.nn, f"LazyInstanceNorm{dims}d")()
        sample = rng.standard_normal((2, 3, 4, 5, 6)[:2 + dims]).astype(np.float32)
        y, t = ours(mt.tensor(sample)), theirs(torch.tensor(sample))
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-5)
