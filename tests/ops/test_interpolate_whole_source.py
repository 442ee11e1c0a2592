"""An inf at a whole source position of ``interpolate``: PyTorch computes the source position
``r (o + 1/2) - 1/2`` with one rounding (its compiled kernel contracts it to an FMA), so where the rounded
scale r is not exactly in / out the position is a hair off whole and both taps weigh something (an inf stays
inf); where it is exactly whole the zero-weight tap reads the inf (NaN). Bicubic clamps its fraction into
[0, 1] (guard_index_and_lambda) with the integer part from C's floorf (of the position rounded to float32).
References: exact rational arithmetic (fractions) and IEEE products in Python floats, written here."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F

A = -0.75


def ref_source(n_in: int, n_out: int, o: int, f32: bool) -> float:
    """PyTorch's source position: the scale rounded in opmath, then r (o + 1/2) - 1/2 rounded once."""
    r = float(np.float32(n_in) / np.float32(n_out)) if f32 else n_in / n_out
    exact = Fraction(r) * (Fraction(o) + Fraction(1, 2)) - Fraction(1, 2)
    return float(np.float32(float(exact))) if f32 else float(exact)


def ref_linear(x: list[float], n_out: int, f32: bool = False) -> list[float]:
    out = []
    for o in range(n_out):
        src = max(ref_source(len(x), n_out, o, f32), 0.0)
        i = min(math.floor(np.float32(src)), len(x) - 1)
        lam = min(max(src - i, 0.0), 1.0)
        out.append((1 - lam) * x[i] + lam * x[min(i + 1, len(x) - 1)])
    return out


def ref_cubic(x: list[float], n_out: int) -> list[float]:
    def near(v: float) -> float:
        return ((A + 2) * v - (A + 3)) * v * v + 1

    def far(v: float) -> float:
        return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A

    out = []
    for o in range(n_out):
        src = ref_source(len(x), n_out, o, False)
        i = min(math.floor(np.float32(src)), len(x) - 1)
        t = min(max(src - i, 0.0), 1.0)
        w = (far(t + 1), near(t), near(1 - t), far((1 - t) + 1))
        taps = [x[min(max(i + k, 0), len(x) - 1)] for k in (-1, 0, 1, 2)]
        acc = 0.0
        for wk, xk in zip(w, taps):
            acc += wk * xk
        out.append(acc)
    return out


def same_specials(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(np.isposinf(a), np.isposinf(b))
                and np.array_equal(np.isneginf(a), np.isneginf(b)))


def test_a_lone_inf_upsampled_linearly():
    # r = float(1/5) > 1/5: the position of output 2 is a hair above 0, so both taps (both the inf) weigh > 0
    y = F.interpolate(mt.tensor([[[math.inf]]], dtype=mt.float64), size=5, mode="linear").numpy()[0, 0]
    assert same_specials(y, np.array([math.nan, math.nan, math.inf, math.inf, math.inf]))
    assert same_specials(y, np.array(ref_linear([math.inf], 5)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n_in, n_out, pos", [(3, 9, 1), (4, 12, 2), (3, 7, 0), (5, 15, 3), (6, 4, 5), (2, 7, 1)])
def test_linear_specials_against_exact_positions(dtype, n_in, n_out, pos):
    for bad in (math.inf, -math.inf, math.nan):
        x = [float(v) for v in np.linspace(-1.0, 1.0, n_in)]
        x[pos] = bad
        y = F.interpolate(mt.tensor([[x]], dtype=getattr(mt, dtype)), size=n_out, mode="linear").numpy()[0, 0]
        assert same_specials(y, np.array(ref_linear(x, n_out, dtype == "float32"))), (x, y)


@pytest.mark.parametrize("n_in, n_out, pos", [(3, 9, 2), (4, 12, 2), (5, 15, 3), (5, 15, 2), (4, 7, 1)])
@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_bicubic_specials_against_exact_positions(n_in, n_out, pos, bad):
    x = [1.0] * n_in
    x[pos] = bad
    rows = [[0.5] * n_in, x, [0.25] * n_in]  # the middle row's unchanged axis: weights (0, 1, 0, 0), finite rows
    y = F.interpolate(mt.tensor([[rows]], dtype=mt.float64), size=(3, n_out), mode="bicubic").numpy()[0, 0, 1]
    assert same_specials(y, np.array(ref_cubic(x, n_out))), y


def test_bicubic_position_a_hair_below_whole():
    # in 3 -> out 9, output 1: float(1/3) < 1/3, so its position r 1.5 - 1/2 rounded once is a hair below 0:
    # integer part -1, taps -2..1 (clamped), not the inf at 2. Rounded twice it would be exactly 0, whose
    # taps -1..2 read the inf with weight 0 (NaN)
    x = [1.0, 1.0, math.inf]
    rows = [[0.5] * 3, x, [0.25] * 3]
    y = F.interpolate(mt.tensor([[rows]], dtype=mt.float64), size=(3, 9), mode="bicubic").numpy()[0, 0, 1]
    assert np.isfinite(y[:2]).all() and same_specials(y, np.array(ref_cubic(x, 9)))


@pytest.mark.torch
@settings(max_examples=120, deadline=None)
@given(mode=st.sampled_from(["linear", "bilinear", "trilinear", "bicubic"]), data=st.data(),
       align_corners=st.booleans(), dtype=st.sampled_from(["float32", "float64"]),
       bad=st.sampled_from([math.inf, -math.inf, math.nan]), by_scale=st.booleans())
def test_specials_match_torch_everywhere(mode, data, align_corners, dtype, bad, by_scale):
    torch = pytest.importorskip("torch")
    dims = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}[mode]
    shape = (1, 2) + tuple(data.draw(st.integers(1, 6)) for _ in range(dims))
    if by_scale:
        scale = tuple(data.draw(st.sampled_from([0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 2.5])) for _ in range(dims))
        if min(math.floor(n * s) for n, s in zip(shape[2:], scale)) < 1:
            return
        kw: dict = {"scale_factor": scale}
    else:
        kw = {"size": tuple(data.draw(st.integers(1, 12)) for _ in range(dims))}
    x = np.random.default_rng(0).standard_normal(shape)
    x[tuple(data.draw(st.integers(0, s - 1)) for s in shape)] = bad
    theirs = torch.nn.functional.interpolate(torch.tensor(x, dtype=getattr(torch, dtype)), mode=mode,
                                             align_corners=align_corners, **kw).numpy()
    ours = F.interpolate(mt.tensor(x, dtype=getattr(mt, dtype)), mode=mode, align_corners=align_corners,
                         **kw).numpy()
    assert same_specials(ours, theirs)
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-5, atol=1e-5)
