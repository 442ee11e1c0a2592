"""``nn.utils.fusion``: the fused layer equals layer -> BatchNorm in eval mode (float64), the fused weights
equal a NumPy reference, the originals are left alone; PyTorch parity (marked torch) on the same weights."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn.utils import fusion


def _bn(num_features: int, seed: int, affine: bool = True, cls=nn.BatchNorm2d):
    rng = np.random.default_rng(seed)
    bn = cls(num_features, affine=affine).double()
    bn.running_mean.copy_(mt.tensor(rng.standard_normal(num_features)))
    bn.running_var.copy_(mt.tensor(rng.uniform(0.5, 2.0, num_features)))
    if affine:
        bn.weight.data = mt.tensor(rng.standard_normal(num_features))
        bn.bias.data = mt.tensor(rng.standard_normal(num_features))
    return bn.eval()


def _reference(w: np.ndarray, b: np.ndarray | None, bn, out_dim: int) -> tuple[np.ndarray, np.ndarray]:
    mean, var = bn.running_mean.numpy(), bn.running_var.numpy()
    gamma = bn.weight.detach().numpy() if bn.weight is not None else np.ones_like(mean)
    beta = bn.bias.detach().numpy() if bn.bias is not None else np.zeros_like(mean)
    s = gamma / np.sqrt(var + bn.eps)
    shape = [1] * w.ndim
    shape[out_dim] = -1
    return w * s.reshape(shape), ((b if b is not None else 0.0) - mean) * s + beta


@pytest.mark.parametrize("bias, affine", [(True, True), (False, True), (True, False), (False, False)])
def test_conv_bn(bias, affine):
    mt.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1, bias=bias).double().eval()
    bn = _bn(4, 1, affine)
    w_before = conv.weight.detach().numpy().copy()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    assert type(fused) is nn.Conv2d and fused is not conv
    np.testing.assert_array_equal(conv.weight.detach().numpy(), w_before)  # the original is untouched
    assert (conv.bias is None) == (not bias)
    w_ref, b_ref = _reference(w_before, conv.bias.detach().numpy() if bias else None, bn, 0)
    np.testing.assert_allclose(fused.weight.detach().numpy(), w_ref, rtol=1e-12)
    np.testing.assert_allclose(fused.bias.detach().numpy(), b_ref, rtol=1e-12, atol=1e-15)
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    assert fused.bias.requires_grad == bias  # a bias made from zeros does not require grad, as PyTorch
    x = mt.tensor(np.random.default_rng(2).standard_normal((2, 3, 6, 6)))
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_conv1d_and_transposed_conv():
    mt.manual_seed(1)
    conv = nn.Conv1d(2, 5, 3).double().eval()
    bn = _bn(5, 3, cls=nn.BatchNorm1d)
    x = mt.tensor(np.random.default_rng(0).standard_normal((3, 2, 9)))
    np.testing.assert_allclose(fusion.fuse_conv_bn_eval(conv, bn)(x).detach().numpy(),
                               bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    tconv = nn.ConvTranspose2d(3, 4, 3, stride=2).double().eval()
    bn2 = _bn(4, 4)
    x2 = mt.tensor(np.random.default_rng(1).standard_normal((2, 3, 4, 4)))
    fused = fusion.fuse_conv_bn_eval(tconv, bn2, transpose=True)
    w_ref, _ = _reference(tconv.weight.detach().numpy(), tconv.bias.detach().numpy(), bn2, 1)
    np.testing.assert_allclose(fused.weight.detach().numpy(), w_ref, rtol=1e-12)
    np.testing.assert_allclose(fused(x2).detach().numpy(), bn2(tconv(x2)).detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("num_features", [6, 1])
def test_linear_bn(num_features):
    mt.manual_seed(2)
    linear = nn.Linear(4, 6).double().eval()
    bn = _bn(num_features, 5, cls=nn.BatchNorm1d)
    fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    assert tuple(fused.weight.shape) == (6, 4) and tuple(fused.bias.shape) == (6,)
    x = mt.tensor(np.random.default_rng(3).standard_normal((5, 4)))
    expected = bn(linear(x)) if num_features == 6 else bn(linear(x).reshape(-1, 1)).reshape(5, 6)
    np.testing.assert_allclose(fused(x).detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_checks_and_dtypes():
    conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fusion.fuse_conv_bn_eval(conv, bn.eval())
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        fusion.fuse_linear_bn_eval(nn.Linear(3, 4).eval(), nn.BatchNorm1d(4))
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        fusion.fuse_linear_bn_eval(nn.Linear(3, 4).eval(), nn.BatchNorm1d(3).eval())
    w, b = fusion.fuse_conv_bn_weights(conv.weight, None, bn.running_mean, bn.running_var, bn.eps, None, None)
    assert w.dtype == mt.float32 and b.dtype == mt.float32 and w.requires_grad and not b.requires_grad


@pytest.mark.torch
def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    conv_w, conv_b = rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2, 4)
    gamma, beta = rng.standard_normal(4), rng.standard_normal(4)
    for transpose in (False, True):
        if transpose:
            conv_w = conv_w.transpose(1, 0, 2, 3).copy()  # (in, out, kh, kw): out channels on dim 1
        ours = fusion.fuse_conv_bn_weights(*(mt.tensor(a) for a in (conv_w, conv_b, rm, rv)), 1e-5,
                                           mt.tensor(gamma), mt.tensor(beta), transpose)
        theirs = torch.nn.utils.fuse_conv_bn_weights(*(torch.tensor(a) for a in (conv_w, conv_b, rm, rv)), 1e-5,
                                                     torch.tensor(gamma), torch.tensor(beta), transpose)
        for a, t in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-13)
            assert a.requires_grad == t.requires_grad
    lin_w, lin_b = rng.standard_normal((4, 5)), rng.standard_normal(4)
    ours = fusion.fuse_linear_bn_weights(*(mt.tensor(a) for a in (lin_w, lin_b, rm, rv)), 1e-5, mt.tensor(gamma),
                                         mt.tensor(beta))
    theirs = torch.nn.utils.fuse_linear_bn_weights(*(torch.tensor(a) for a in (lin_w, lin_b, rm, rv)), 1e-5,
                                                   torch.tensor(gamma), torch.tensor(beta))
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-13)
