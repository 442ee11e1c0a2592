"""conv1d / conv3d and their transposes (1-D runs as 2-D on a unit height, 3-D as 2-D over gathered depth
windows) against direct float64 NumPy references for any number of dims, gradients by finite differences,
the Conv1d/3d and ConvTranspose1d/3d layers, and parity with PyTorch where installed."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=20, deadline=None)
CONV = {1: F.conv1d, 3: F.conv3d}
CONV_T = {1: F.conv_transpose1d, 3: F.conv_transpose3d}


def conv_ref(x, w, b, stride, padding, dilation, groups):
    """y[n, o, p] = b[o] + sum over o's group of channels c and kernel offsets k of
    w[o, c, k] x_pad[n, c, p * stride + k * dilation], one kernel offset at a time."""
    dims = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [(xp.shape[2 + a] - dilation[a] * (w.shape[2 + a] - 1) - 1) // stride[a] + 1 for a in range(dims)]
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for k in itertools.product(*(range(s) for s in w.shape[2:])):
        window = xp[(Ellipsis, *(slice(k[a] * dilation[a], k[a] * dilation[a] + stride[a] * (out[a] - 1) + 1,
                                       stride[a]) for a in range(dims)))]
        for g in range(groups):
            y[:, g * og:(g + 1) * og] += np.einsum("oc,nc...->no...", w[(slice(g * og, (g + 1) * og), slice(None), *k)],
                                                   window[:, g * cg:(g + 1) * cg])
    return y + (0 if b is None else b.reshape(-1, *(1,) * dims))


def conv_transpose_ref(x, w, b, stride, padding, output_padding, dilation, groups):
    """y_full[n, o, i * stride + k * dilation] += x[n, c, i] w[c, o, k] over c in o's group, then cut the
    padding from both ends (output_padding extends the end)."""
    dims = x.ndim - 2
    cg, og = x.shape[1] // groups, w.shape[1]
    full = [(x.shape[2 + a] - 1) * stride[a] + dilation[a] * (w.shape[2 + a] - 1) + 1 + output_padding[a]
            for a in range(dims)]
    y = np.zeros((x.shape[0], og * groups, *full))
    for k in itertools.product(*(range(s) for s in w.shape[2:])):
        where = tuple(slice(k[a] * dilation[a], k[a] * dilation[a] + stride[a] * (x.shape[2 + a] - 1) + 1, stride[a])
                      for a in range(dims))
        for g in range(groups):
            y[(slice(None), slice(g * og, (g + 1) * og), *where)] += np.einsum(
                "co,nc...->no...", w[(slice(g * cg, (g + 1) * cg), slice(None), *k)], x[:, g * cg:(g + 1) * cg])
    y = y[(Ellipsis, *(slice(padding[a], full[a] - padding[a]) for a in range(dims)))]
    return y + (0 if b is None else b.reshape(-1, *(1,) * dims))


def _params(data, dims):
    ints = lambda lo, hi: tuple(data.draw(st.lists(st.integers(lo, hi), min_size=dims, max_size=dims)))  # noqa: E731
    return ints(1, 3), ints(1, 2), ints(0, 1), ints(1, 2), data.draw(st.sampled_from([1, 2]))


@pytest.mark.parametrize("dims", [1, 3])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 999), with_bias=st.booleans())
def test_conv_matches_the_reference(dims, data, seed, with_bias):
    kernel, stride, padding, dilation, groups = _params(data, dims)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 2 * groups, *(6,) * dims))
    w = rng.normal(size=(2 * groups, 2, *kernel))
    b = rng.normal(size=2 * groups) if with_bias else None
    got = CONV[dims](mt.tensor(x), mt.tensor(w), None if b is None else mt.tensor(b), stride, padding, dilation,
                     groups)
    np.testing.assert_allclose(got.numpy(), conv_ref(x, w, b, stride, padding, dilation, groups), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("dims", [1, 3])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 999))
def test_conv_transpose_matches_the_reference(dims, data, seed):
    kernel, stride, padding, dilation, groups = _params(data, dims)
    output_padding = tuple(data.draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 2 * groups, *(3,) * dims))
    w, b = rng.normal(size=(2 * groups, 2, *kernel)), rng.normal(size=2 * groups)
    if any((3 - 1) * s - 2 * p + d * (k - 1) + op + 1 < 1
           for s, p, d, k, op in zip(stride, padding, dilation, kernel, output_padding)):
        return
    got = CONV_T[dims](mt.tensor(x), mt.tensor(w), mt.tensor(b), stride, padding, output_padding, groups, dilation)
    np.testing.assert_allclose(got.numpy(), conv_transpose_ref(x, w, b, stride, padding, output_padding, dilation,
                                                               groups), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dims", [1, 3])
def test_gradients_and_same_padding(dims):
    rng = np.random.default_rng(dims)
    x, w, b = rng.normal(size=(2, 4, *(4,) * dims)), rng.normal(size=(4, 2, *(2,) * dims)), rng.normal(size=4)
    t = [mt.tensor(a, requires_grad=True) for a in (x, w, b)]
    gradcheck(lambda a, ww, bb: CONV[dims](a, ww, bb, 2, 1, 1, 2), t)
    gradcheck(lambda a, ww, bb: CONV_T[dims](a, ww, bb, 2, 1, 1, 2, 1), t)
    for dilation, widths in ((2, (1, 1)), (1, (0, 1))):  # 'same' padding puts an odd pixel after
        same = CONV[dims](t[0], t[1], None, 1, "same", dilation, 2)
        expected = conv_ref(np.pad(x, [(0, 0), (0, 0)] + [widths] * dims), w, None, (1,) * dims, (0,) * dims,
                            (dilation,) * dims, 2)
        np.testing.assert_allclose(same.detach().numpy(), expected, rtol=1e-10)
    unbatched = CONV[dims](t[0][0], t[1], t[2], groups=2)
    np.testing.assert_allclose(unbatched.detach().numpy(), CONV[dims](t[0], t[1], t[2], groups=2)[0].detach().numpy())


def test_errors_name_the_problem():
    with pytest.raises(RuntimeError, match=r"conv1d: expected a 2D \(unbatched\) or 3D \(batched\) input"):
        F.conv1d(mt.randn(1, 2, 3, 4), mt.randn(2, 2, 3))
    with pytest.raises(RuntimeError, match="weight must be 5D"):
        F.conv3d(mt.randn(1, 2, 3, 4, 4), mt.randn(2, 2, 3, 3))
    with pytest.raises(RuntimeError, match="expected input with 2 channels"):
        F.conv3d(mt.randn(1, 3, 4, 4, 4), mt.randn(2, 2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="larger than the padded input"):
        F.conv3d(mt.randn(1, 2, 2, 4, 4), mt.randn(2, 2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="not supported for strided"):
        F.conv3d(mt.randn(1, 2, 4, 4, 4), mt.randn(2, 2, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="output_padding must be smaller"):
        F.conv_transpose3d(mt.randn(1, 2, 3, 3, 3), mt.randn(2, 2, 3, 3, 3), output_padding=(1, 0, 0))
    with pytest.raises(RuntimeError, match="stride must be an int or a tuple of 3 ints"):
        F.conv3d(mt.randn(1, 2, 4, 4, 4), mt.randn(2, 2, 3, 3, 3), stride=(1, 2))


def test_layers_keep_pytorch_names_shapes_and_reprs():
    assert repr(nn.Conv1d(2, 4, 3)) == "Conv1d(2, 4, kernel_size=(3,), stride=(1,))"
    assert repr(nn.Conv3d(2, 4, 3, padding=1, bias=False)) == \
        "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), bias=False)"
    assert repr(nn.ConvTranspose1d(2, 4, 3, stride=2)) == "ConvTranspose1d(2, 4, kernel_size=(3,), stride=(2,))"
    assert nn.Conv3d(2, 4, (1, 2, 3), groups=2).weight.shape == (4, 1, 1, 2, 3)
    assert nn.ConvTranspose3d(2, 4, 3, groups=2).weight.shape == (2, 2, 3, 3, 3)
    assert list(nn.Conv1d(2, 4, 3).state_dict()) == ["weight", "bias"]
    assert not isinstance(nn.Conv1d(2, 4, 3), nn.Conv2d)
    assert not isinstance(nn.ConvTranspose3d(2, 4, 3), nn.ConvTranspose2d)
    m = nn.Conv1d(2, 3, 3, padding="same", padding_mode="circular")
    x = np.random.default_rng(0).normal(size=(1, 2, 5)).astype(np.float32)
    expected = conv_ref(np.pad(x, [(0, 0), (0, 0), (1, 1)], mode="wrap").astype(np.float64),
                        m.weight.detach().numpy(), m.bias.detach().numpy(), (1,), (0,), (1,), 1)
    np.testing.assert_allclose(m(mt.tensor(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    t = nn.ConvTranspose3d(2, 2, 3, stride=2)
    assert t(mt.randn(1, 2, 2, 2, 2), output_size=(6, 6, 6)).shape == (1, 2, 6, 6, 6)
    assert nn.ConvTranspose1d(2, 2, 3, stride=2)(mt.randn(2, 4), output_size=[10]).shape == (2, 10)
    with pytest.raises(ValueError, match="valid sizes range"):
        t(mt.randn(1, 2, 2, 2, 2), output_size=(9, 6, 6))


@pytest.mark.torch
def test_conv_nd_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for dims, trial in itertools.product((1, 3), range(6)):
        groups = 1 + trial % 2
        k, s, d = (1 + trial % 3,) * dims, (1 + trial % 2,) * dims, (1 + (trial // 2) % 2,) * dims
        x, w = rng.normal(size=(2, 2 * groups, *(5,) * dims)), rng.normal(size=(2 * groups, 2, *k))
        b = rng.normal(size=2 * groups)
        for ours, theirs, args in ((CONV[dims], getattr(torch.nn.functional, f"conv{dims}d"), (s, 1, d, groups)),
                                   (CONV_T[dims], getattr(torch.nn.functional, f"conv_transpose{dims}d"),
                                    (s, 0, (0,) * dims, groups, d))):
            mine = [mt.tensor(a, requires_grad=True) for a in (x, w, b)]
            ref = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
            ym, yt = ours(*mine, *args), theirs(*ref, *args)
            g = rng.normal(size=tuple(yt.shape))
            ym.backward(mt.tensor(g))
            yt.backward(torch.tensor(g))
            np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
            for m, t in zip(mine, ref):
                np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
