"""interpolate (every mode, align_corners, scale_factor / size) against per-axis NumPy float64 references,
its gradients by finite differences, pixel_shuffle / pixel_unshuffle against index loops, the modules, and
parity with PyTorch where installed."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=25, deadline=None)
A = -0.75  # PyTorch's bicubic coefficient


def _source(o, n_in, n_out, align_corners, scale):
    if align_corners:
        return o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    r = 1 / scale if scale else n_in / n_out
    return (o + 0.5) * r - 0.5


def _cubic(d):
    d = np.abs(d)
    return np.where(d <= 1, (A + 2) * d ** 3 - (A + 3) * d ** 2 + 1,
                    np.where(d < 2, A * d ** 3 - 5 * A * d ** 2 + 8 * A * d - 4 * A, 0.0))


def resample_axis(x, axis, n_out, mode, align_corners=False, scale=None):
    """One axis of x resampled, written from the definitions output position by output position."""
    n_in = x.shape[axis]
    rows = []
    for o in range(n_out):
        if mode in ("nearest", "nearest-exact"):
            r = np.float32(1 / scale) if scale else np.float32(n_in) / np.float32(n_out)
            pos = np.float32(o) + np.float32(0.5 if mode == "nearest-exact" else 0)
            rows.append(np.take(x, min(int(math.floor(pos * r)), n_in - 1), axis))
        elif mode == "area":
            lo, hi = o * n_in // n_out, -(-(o + 1) * n_in // n_out)
            rows.append(np.take(x, range(lo, hi), axis).mean(axis))
        elif mode == "bicubic":
            src = _source(o, n_in, n_out, align_corners, scale)
            i = math.floor(src)
            rows.append(sum(_cubic(k - (src - i)) * np.take(x, min(max(i + k, 0), n_in - 1), axis)
                            for k in (-1, 0, 1, 2)))
        else:
            src = max(_source(o, n_in, n_out, align_corners, scale), 0.0)
            i0 = min(math.floor(src), n_in - 1)
            t = src - i0
            rows.append((1 - t) * np.take(x, i0, axis) + t * np.take(x, min(i0 + 1, n_in - 1), axis))
    return np.stack(rows, axis)


def interpolate_ref(x, sizes, mode, align_corners=False, scales=None):
    for k, n_out in enumerate(sizes):
        x = resample_axis(x, 2 + k, n_out, mode, align_corners, scales[k] if scales else None)
    return x


MODES = {"nearest": (3, 4, 5), "nearest-exact": (3, 4), "area": (3, 4), "linear": (3,), "bilinear": (4,),
         "bicubic": (4,), "trilinear": (5,)}


@pytest.mark.parametrize("mode", sorted(MODES))
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 999))
def test_interpolate_matches_the_reference(mode, data, seed):
    ndim = data.draw(st.sampled_from(MODES[mode]))
    spatial = data.draw(st.lists(st.integers(1, 5), min_size=ndim - 2, max_size=ndim - 2))
    x = np.random.default_rng(seed).normal(size=(2, 3, *spatial))
    align = None if mode in ("nearest", "nearest-exact", "area") else data.draw(st.booleans())
    if data.draw(st.booleans()):
        sizes = data.draw(st.lists(st.integers(1, 7), min_size=ndim - 2, max_size=ndim - 2))
        got = F.interpolate(mt.tensor(x), size=tuple(sizes), mode=mode, align_corners=align)
        expected = interpolate_ref(x, sizes, mode, bool(align))
    else:
        scales = data.draw(st.lists(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 2.5]), min_size=ndim - 2,
                                    max_size=ndim - 2))
        sizes = [math.floor(n * s) for n, s in zip(spatial, scales)]
        if min(sizes) < 1:
            return
        got = F.interpolate(mt.tensor(x), scale_factor=tuple(scales), mode=mode, align_corners=align)
        expected = interpolate_ref(x, sizes, mode, bool(align), None if mode == "area" else scales)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode, shape, kwargs", [
    ("nearest", (1, 2, 3, 4), {"scale_factor": 2}), ("nearest-exact", (1, 2, 5), {"size": 3}),
    ("linear", (2, 2, 4), {"size": 7}), ("linear", (2, 2, 4), {"scale_factor": 1.5, "align_corners": True}),
    ("bilinear", (1, 2, 3, 4), {"size": (5, 2)}), ("bicubic", (1, 2, 4, 3), {"size": (6, 7)}),
    ("bicubic", (1, 1, 3, 3), {"scale_factor": 2, "align_corners": True}),
    ("trilinear", (1, 1, 2, 3, 2), {"size": (3, 4, 3)}), ("area", (1, 2, 5, 4), {"size": (3, 2)})])
def test_interpolate_gradcheck(mode, shape, kwargs):
    x = np.random.default_rng(0).normal(size=shape)
    gradcheck(lambda t: F.interpolate(t, mode=mode, **kwargs), (mt.tensor(x, requires_grad=True),))


def test_interpolate_known_values_and_dtypes():
    x = mt.tensor([[[0.0, 1.0]]])
    assert F.interpolate(x, size=4, mode="linear", align_corners=True)[0, 0].tolist() == \
        pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])
    assert F.interpolate(x, scale_factor=2, mode="linear")[0, 0].tolist() == pytest.approx([0.0, 0.25, 0.75, 1.0])
    assert F.interpolate(x, scale_factor=2).tolist() == [[[0.0, 0.0, 1.0, 1.0]]]
    assert F.interpolate(x, scale_factor=2, mode="linear").dtype == mt.float32
    assert F.interpolate(mt.tensor([[[1, 2]]], dtype=mt.uint8), size=3).dtype == mt.uint8  # as PyTorch: uint8 only


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.interpolate(x), ValueError, "either size or scale_factor"),
    (lambda x: F.interpolate(x, size=2, scale_factor=2.0), ValueError, "only one of size or scale_factor"),
    (lambda x: F.interpolate(x, size=(2, 3)), ValueError, "same number of spatial dimensions"),
    (lambda x: F.interpolate(x, scale_factor=(2.0, 3.0)), ValueError, "same number of spatial dimensions"),
    (lambda x: F.interpolate(x, size=2.5), TypeError, "expected size"),
    (lambda x: F.interpolate(x, size=2, align_corners=True), ValueError, "align_corners option"),
    (lambda x: F.interpolate(x, size=2, mode="bilinear"), NotImplementedError, "bilinear mode needs 4D"),
    (lambda x: F.interpolate(x, size=2, mode="cubic"), NotImplementedError, "Input Error"),
    (lambda x: F.interpolate(x[0], size=2), NotImplementedError, "Only 3D, 4D and 5D"),
    (lambda x: F.interpolate(x, size=2, recompute_scale_factor=True), ValueError, "not meaningful"),
    (lambda x: F.interpolate(x, size=2, mode="linear", antialias=True), ValueError, "Anti-alias option"),
    (lambda x: F.interpolate(x.long(), size=2, mode="linear"), NotImplementedError, "not implemented for 'Long'")])
def test_interpolate_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(mt.randn(1, 2, 4))


def test_upsample_modules_and_the_deprecated_function():
    x = np.random.default_rng(1).normal(size=(1, 2, 3, 3)).astype(np.float32)
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.Upsample(size=(4, 5))) == "Upsample(size=(4, 5), mode='nearest')"
    np.testing.assert_allclose(up(mt.tensor(x)).numpy(), interpolate_ref(x, (6, 6), "bilinear", True), rtol=1e-5)
    np.testing.assert_allclose(nn.UpsamplingBilinear2d(scale_factor=2)(mt.tensor(x)).numpy(),
                               up(mt.tensor(x)).numpy())
    np.testing.assert_array_equal(nn.UpsamplingNearest2d(size=6)(mt.tensor(x)).numpy(), x.repeat(2, 2).repeat(2, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        F.upsample(mt.tensor(x), scale_factor=2)
    assert nn.Upsample(scale_factor=2).state_dict() == {}


# ------------------------------------------------------------------------------------ pixel shuffle
@SETTINGS
@given(batch=st.lists(st.integers(1, 2), max_size=2), c=st.integers(1, 3), h=st.integers(1, 3), w=st.integers(1, 3),
       r=st.integers(1, 3))
def test_pixel_shuffle_matches_the_index_formula_and_unshuffle_inverts_it(batch, c, h, w, r):
    x = np.random.default_rng(c * h * w).normal(size=(*batch, c * r * r, h, w))
    y = F.pixel_shuffle(mt.tensor(x), r).numpy()
    assert y.shape == (*batch, c, h * r, w * r)
    for ch in range(c):
        for i in range(r):
            for j in range(r):
                np.testing.assert_array_equal(y[..., ch, i::r, j::r], x[..., ch * r * r + i * r + j, :, :])
    np.testing.assert_array_equal(F.pixel_unshuffle(mt.tensor(y), r).numpy(), x)
    np.testing.assert_array_equal(nn.PixelUnshuffle(r)(nn.PixelShuffle(r)(mt.tensor(x))).numpy(), x)


def test_pixel_shuffle_gradients_and_errors():
    x = np.random.default_rng(0).normal(size=(2, 8, 2, 3))
    gradcheck(lambda t: F.pixel_shuffle(t, 2) * mt.arange(24.0, dtype=mt.float64).reshape(4, 6),
              (mt.tensor(x, requires_grad=True),))
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(mt.zeros(2, 3, 4, 4), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(mt.zeros(3, 4), 2)
    with pytest.raises(RuntimeError, match="positive upscale_factor"):
        F.pixel_shuffle(mt.zeros(1, 4, 4), 0)
    with pytest.raises(RuntimeError, match=r"height to be divisible by downscale_factor, but input.size\(-2\)=5"):
        F.pixel_unshuffle(mt.zeros(2, 3, 5, 4), 2)


@pytest.mark.torch
def test_interpolate_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for mode, ndims in MODES.items():
        for ndim in ndims:
            for trial in range(8):
                x = rng.normal(size=(2, 3, *rng.integers(1, 7, ndim - 2)))
                align = None if mode in ("nearest", "nearest-exact", "area") else bool(trial % 2)
                if trial < 4:
                    kwargs = {"size": tuple(int(v) for v in rng.integers(1, 10, ndim - 2))}
                else:
                    kwargs = {"scale_factor": tuple(float(v) for v in rng.choice([0.7, 1.5, 2.0, 2.7], ndim - 2)),
                              "recompute_scale_factor": trial == 7}
                tx = torch.tensor(x, requires_grad=True)
                sizes = kwargs.get("size") or [math.floor(n * s) for n, s in zip(x.shape[2:], kwargs["scale_factor"])]
                if min(sizes) < 1:
                    with pytest.raises(RuntimeError, match="sizes should be greater than 0"):
                        F.interpolate(mt.tensor(x), mode=mode, align_corners=align, **kwargs)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ty = torch.nn.functional.interpolate(tx, mode=mode, align_corners=align, **kwargs)
                g = rng.normal(size=tuple(ty.shape))
                ty.backward(torch.tensor(g))
                mx = mt.tensor(x, requires_grad=True)
                my = F.interpolate(mx, mode=mode, align_corners=align, **kwargs)
                my.backward(mt.tensor(g))
                np.testing.assert_allclose(my.detach().numpy(), ty.detach().numpy(), atol=1e-12, err_msg=mode)
                np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-12, err_msg=mode)
