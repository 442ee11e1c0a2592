"""max / avg pooling in 1-D (2-D on a unit height) and 3-D (2-D over depth, then over planes) against direct
float64 NumPy references, their gradients, max_unpool2d, the layers, and parity with PyTorch where
installed."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=20, deadline=None)
MAX = {1: F.max_pool1d, 3: F.max_pool3d}
AVG = {1: F.avg_pool1d, 3: F.avg_pool3d}


def windows(x, kernel, stride, padding, dilation, fill):
    """(out positions..., window elements) of x padded with ``fill`` (floor mode), and each element's flat
    index in the input (-1 in the padding)."""
    dims = len(kernel)
    spatial = x.shape[2:]
    flat = np.arange(int(np.prod(spatial))).reshape(spatial)
    widths = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    xp, ip = np.pad(x, widths, constant_values=fill), np.pad(flat, widths[2:], constant_values=-1)
    out = [(spatial[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1 for a in range(dims)]
    values, index = [], []
    for k in itertools.product(*(range(s) for s in kernel)):
        where = tuple(slice(k[a] * dilation[a], k[a] * dilation[a] + stride[a] * (out[a] - 1) + 1, stride[a])
                      for a in range(dims))
        values.append(xp[(Ellipsis, *where)])
        index.append(ip[where])
    return np.stack(values, -1), np.stack(index, -1)


@pytest.mark.parametrize("dims", [1, 3])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 999))
def test_max_and_avg_pool_match_the_reference(dims, data, seed):
    kernel = tuple(data.draw(st.lists(st.integers(1, 3), min_size=dims, max_size=dims)))
    stride = tuple(data.draw(st.lists(st.integers(1, 2), min_size=dims, max_size=dims)))
    padding = tuple(data.draw(st.integers(0, k // 2)) for k in kernel)
    dilation = tuple(data.draw(st.lists(st.integers(1, 2), min_size=dims, max_size=dims)))
    x = np.random.default_rng(seed).normal(size=(2, 3, *(5,) * dims))
    vals, idx = windows(x, kernel, stride, padding, dilation, -np.inf)
    y, indices = MAX[dims](mt.tensor(x), kernel, stride, padding, dilation, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), vals.max(-1))
    np.testing.assert_array_equal(indices.numpy(), np.take_along_axis(np.broadcast_to(idx, vals.shape),
                                                                      vals.argmax(-1)[..., None], -1)[..., 0])
    sums, _ = windows(x, kernel, stride, padding, (1,) * dims, 0.0)
    ones, _ = windows(np.ones_like(x), kernel, stride, padding, (1,) * dims, 0.0)
    for include in (True, False):
        got = AVG[dims](mt.tensor(x), kernel, stride, padding, count_include_pad=include)
        divisor = np.prod(kernel) if include else ones.sum(-1)
        np.testing.assert_allclose(got.numpy(), sums.sum(-1) / divisor, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dims", [1, 3])
def test_pool_gradients(dims):
    x = np.random.default_rng(dims).normal(size=(2, 2, *(5,) * dims))
    t = mt.tensor(x, requires_grad=True)
    gradcheck(lambda a: MAX[dims](a, 3, 2, 1), (t,))
    gradcheck(lambda a: AVG[dims](a, 3, 2, 1, True, False), (t,))
    gradcheck(lambda a: MAX[dims](a, 2, 1, 0, 2), (t,))
    if dims == 3:
        gradcheck(lambda a: F.avg_pool3d(a, 2, 1, 1, divisor_override=3), (t,))
    assert MAX[dims](t[0], 2).shape == MAX[dims](t, 2).shape[1:]  # unbatched


def test_max_pool_3d_gives_one_gradient_per_window():
    x = mt.tensor(np.arange(64.0).reshape(1, 1, 4, 4, 4), requires_grad=True)
    F.max_pool3d(x, 2).sum().backward()
    expected = np.zeros((4, 4, 4))
    expected[1::2, 1::2, 1::2] = 1
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)


def test_max_unpool2d_puts_values_back_and_gathers_gradients():
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 6))
    y, indices = F.max_pool2d(mt.tensor(x), 2, return_indices=True)
    out = F.max_unpool2d(y, indices, 2)
    expected = np.zeros((2, 3, 24))
    np.put_along_axis(expected, indices.numpy().reshape(2, 3, -1), y.numpy().reshape(2, 3, -1), -1)
    np.testing.assert_array_equal(out.numpy(), expected.reshape(2, 3, 4, 6))
    assert F.max_unpool2d(y, indices, 2, output_size=(5, 7)).shape == (2, 3, 5, 7)
    assert F.max_unpool2d(y[0], indices[0], 2).shape == (3, 4, 6)
    unpool = nn.MaxUnpool2d(2)
    assert repr(unpool) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    np.testing.assert_array_equal(unpool(y, indices, output_size=[2, 3, 4, 6]).numpy(), out.numpy())
    gradcheck(lambda v: F.max_unpool2d(v, indices, 2), (mt.tensor(y.numpy(), requires_grad=True),))


@pytest.mark.parametrize("dims", [1, 3])
def test_max_unpool_1d_and_3d_invert_their_pools(dims):
    x = np.random.default_rng(dims).normal(size=(2, 3, *(4,) * dims))
    y, indices = MAX[dims](mt.tensor(x), 2, return_indices=True)
    unpool = (F.max_unpool1d, None, F.max_unpool3d)[dims - 1]
    out = unpool(y, indices, 2)
    expected = np.zeros((2, 3, 4 ** dims))
    np.put_along_axis(expected, indices.numpy().reshape(2, 3, -1), y.numpy().reshape(2, 3, -1), -1)
    np.testing.assert_array_equal(out.numpy(), expected.reshape(x.shape))
    layer = (nn.MaxUnpool1d, None, nn.MaxUnpool3d)[dims - 1](2)
    assert repr(layer) == f"MaxUnpool{dims}d(kernel_size={(2,) * dims}, stride={(2,) * dims}, padding={(0,) * dims})"
    np.testing.assert_array_equal(layer(y[0], indices[0]).numpy(), out.numpy()[0])
    assert unpool(y, indices, 2, output_size=(5,) * dims).shape == (2, 3, *(5,) * dims)
    gradcheck(lambda v: unpool(v, indices, 2), (mt.tensor(y.numpy(), requires_grad=True),))


@pytest.mark.parametrize("call, error, message", [
    (lambda y, i: F.max_unpool2d(y, i.int(), 2), RuntimeError, "should be type int64"),
    (lambda y, i: F.max_unpool2d(y, i[..., :1], 2), RuntimeError, "Expected shape of indices"),
    (lambda y, i: F.max_unpool2d(y, i + 100, 2), RuntimeError, "Found an invalid max index: 1"),
    (lambda y, i: F.max_unpool2d(y, i, 2, output_size=(7, 4)), ValueError, "invalid output_size"),
    (lambda y, i: F.max_unpool2d(y, i, 2, output_size=(4,)), ValueError, "2 or 4 elements")])
def test_max_unpool2d_errors(call, error, message):
    y, indices = F.max_pool2d(mt.randn(1, 1, 4, 4), 2, return_indices=True)
    with pytest.raises(error, match=message):
        call(y, indices)


def test_pool_errors_and_layers():
    with pytest.raises(RuntimeError, match=r"max_pool1d: expected a 2D \(unbatched\) or 3D"):
        F.max_pool1d(mt.randn(1, 1, 2, 2), 2)
    with pytest.raises(RuntimeError, match=r"avg_pool3d: expected a 4D \(unbatched\) or 5D"):
        F.avg_pool3d(mt.randn(1, 2, 2), 2)
    with pytest.raises(RuntimeError, match="padding should be at most half"):
        F.max_pool3d(mt.randn(1, 1, 4, 4, 4), 2, padding=(2, 0, 0))
    assert repr(nn.AvgPool1d(2)) == "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.AvgPool3d(2)) == "AvgPool3d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.MaxPool1d(3, 1)) == "MaxPool1d(kernel_size=3, stride=1, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.MaxPool3d(2)) == "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    x = mt.randn(2, 3, 4, 4, 4)
    y, i = nn.MaxPool3d(2, return_indices=True)(x)
    assert y.shape == i.shape == (2, 3, 2, 2, 2)
    np.testing.assert_allclose(nn.AvgPool3d(2, divisor_override=1)(x).numpy(), F.avg_pool3d(x, 2).numpy() * 8,
                               rtol=1e-5)
    assert nn.AvgPool1d(2)(mt.randn(3, 5)).shape == (3, 2)
    assert not isinstance(nn.MaxPool1d(2), nn.MaxPool2d)


@pytest.mark.torch
def test_pool_nd_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for dims, trial in itertools.product((1, 3), range(12)):
        k = tuple(int(v) for v in rng.integers(1, 4, dims))
        s = tuple(int(v) for v in rng.integers(1, 3, dims))
        p = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
        d = tuple(int(v) for v in rng.integers(1, 3, dims))
        ceil, include = bool(trial % 2), bool(trial % 3)
        x = rng.normal(size=(2, 3, *(7,) * dims))
        tf = torch.nn.functional
        cases = [(lambda a: MAX[dims](a, k, s, p, d, ceil, True), lambda a: getattr(tf, f"max_pool{dims}d")(
                     a, k, s, p, d, ceil, True)),
                 (lambda a: AVG[dims](a, k, s, p, ceil, include), lambda a: getattr(tf, f"avg_pool{dims}d")(
                     a, k, s, p, ceil, include))]
        for ours, theirs in cases:
            tx, mx = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
            try:
                yt = theirs(tx)
            except RuntimeError:
                continue
            ym = ours(mx)
            if isinstance(yt, tuple):
                np.testing.assert_array_equal(ym[1].numpy(), yt[1].numpy())
                yt, ym = yt[0], ym[0]
            g = rng.normal(size=tuple(yt.shape))
            yt.backward(torch.tensor(g))
            ym.backward(mt.tensor(g))
            np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


def adaptive_ref(x, sizes):
    """Each output cell averages [floor(i n / out), ceil((i + 1) n / out)) along each spatial dim, cell by cell."""
    dims = len(sizes)
    out = np.empty(x.shape[:2] + tuple(sizes))
    for cell in itertools.product(*(range(s) for s in sizes)):
        box = tuple(slice(i * n // s, -(-(i + 1) * n // s)) for i, n, s in zip(cell, x.shape[2:], sizes))
        out[(Ellipsis, *cell)] = x[(Ellipsis, *box)].mean(axis=tuple(range(2, 2 + dims)))
    return out


@pytest.mark.parametrize("dims, output_size, expected", [(1, 3, (3,)), (1, [7], (7,)), (3, 2, (2, 2, 2)),
                                                         (3, (3, None, 1), (3, 5, 1)), (3, (4, 5, 6), (4, 5, 6))])
def test_adaptive_avg_pool_1d_and_3d(dims, output_size, expected):
    x = np.random.default_rng(dims).normal(size=(2, 3, *((4, 5, 6) if dims == 3 else (5,))))
    fn = F.adaptive_avg_pool1d if dims == 1 else F.adaptive_avg_pool3d
    got = fn(mt.tensor(x), output_size)
    np.testing.assert_allclose(got.numpy(), adaptive_ref(x, expected), rtol=1e-12)
    gradcheck(lambda t: fn(t, output_size), (mt.tensor(x, requires_grad=True),))
    layer = (nn.AdaptiveAvgPool1d if dims == 1 else nn.AdaptiveAvgPool3d)(output_size)
    assert repr(layer) == f"AdaptiveAvgPool{dims}d(output_size={output_size})"
    np.testing.assert_allclose(layer(mt.tensor(x[0])).numpy(), got.numpy()[0], rtol=1e-12)
    assert not isinstance(layer, nn.AdaptiveAvgPool2d)
