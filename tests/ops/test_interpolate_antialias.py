"""``interpolate(antialias=True)``: PyTorch's separable anti-aliasing filter (a triangle for bilinear, Keys'
cubic with a = -1/2 for bicubic, widened by the downsampling factor and normalised per output), checked by
its closed forms, by finite differences, and against PyTorch where installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from helpers import SETTINGS, check_grad


def test_halving_bilinear_is_the_binomial_filter():
    """Scale 2: output o reads inputs 2o-1 .. 2o+2 with the triangle at (-3/4, -1/4, 1/4, 3/4), normalised:
    weights 1/8, 3/8, 3/8, 1/8 (at the borders the taps outside are dropped and the rest renormalised)."""
    x = np.random.default_rng(0).standard_normal(16)
    y = F.interpolate(mt.tensor(x.reshape(1, 1, 1, 16)), size=(1, 8), mode="bilinear", antialias=True).numpy()[0, 0, 0]
    expected = [x[2 * o - 1: 2 * o + 3] @ np.array([1, 3, 3, 1]) / 8 for o in range(1, 7)]
    np.testing.assert_allclose(y[1:7], expected, rtol=1e-13)
    np.testing.assert_allclose(y[0], x[0:3] @ np.array([3, 3, 1]) / 7, rtol=1e-13)


@SETTINGS
@given(h=st.integers(1, 12), w=st.integers(1, 12), oh=st.integers(1, 12), ow=st.integers(1, 12),
       mode=st.sampled_from(["bilinear", "bicubic"]), align_corners=st.booleans())
def test_a_constant_image_stays_constant(h, w, oh, ow, mode, align_corners):
    """The weights of every output sum to one, up and down, with or without align_corners."""
    y = F.interpolate(mt.full((1, 2, h, w), 3.5, dtype=mt.float64), size=(oh, ow), mode=mode,
                      align_corners=align_corners, antialias=True)
    np.testing.assert_allclose(y.numpy(), 3.5, rtol=1e-13)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(3, 5), (9, 4)])
def test_gradients_match_finite_differences(mode, size):
    x = np.random.default_rng(1).standard_normal((1, 2, 7, 8))
    check_grad(lambda t: F.interpolate(t, size=size, mode=mode, antialias=True), x)


def test_one_column_output_keeps_each_row():
    """Each output row is its own rows' average (PyTorch 2.13 repeats the first one: docs/differences.md)."""
    x = np.arange(48.0).reshape(1, 1, 6, 8)
    y = F.interpolate(mt.tensor(x), size=(3, 1), mode="bilinear", antialias=True).numpy()[0, :, :, 0]
    columns = F.interpolate(mt.tensor(x), size=(6, 1), mode="bilinear", antialias=True).numpy()[0, 0, :, 0]
    rows = F.interpolate(mt.tensor(columns.reshape(1, 1, 1, 6)), size=(1, 3), mode="bilinear",
                         antialias=True).numpy()[0, 0, 0]
    np.testing.assert_allclose(y[0], rows, rtol=1e-13)  # separable: the columns' filter, then the rows'
    assert np.all(np.diff(y[0]) > 10)


def test_errors_and_node_name():
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic"):
        F.interpolate(mt.randn(1, 1, 4), scale_factor=0.5, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="requires a 4-D tensor"):
        F.interpolate(mt.randn(1, 1, 4, 4), scale_factor=0.5, mode="nearest", antialias=True)
    with pytest.raises(NotImplementedError, match="uint8"):
        F.interpolate(mt.zeros(1, 1, 4, 4, dtype=mt.uint8), size=(2, 2), mode="bilinear", antialias=True)
    y = F.interpolate(mt.randn(1, 1, 4, 4, requires_grad=True), size=(2, 2), mode="bicubic", antialias=True)
    assert y.grad_fn.name() == "UpsampleBicubic2DAaBackward0"


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_against_pytorch(mode, align_corners):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    for (h, w), size in [((16, 16), (4, 4)), ((17, 23), (7, 9)), ((5, 40), (20, 30)), ((32, 7), (1, 1)),
                         ((8, 8), (16, 16))]:
        x = rng.standard_normal((2, 3, h, w))
        ours = F.interpolate(mt.tensor(x), size=size, mode=mode, align_corners=align_corners, antialias=True)
        theirs = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode, align_corners=align_corners,
                                                 antialias=True)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-13)
    for factor in (0.5, 0.3, 1.7):
        x = rng.standard_normal((1, 2, 13, 11))
        ours = F.interpolate(mt.tensor(x), scale_factor=factor, mode=mode, antialias=True)
        theirs = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=factor, mode=mode, antialias=True)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-13)
