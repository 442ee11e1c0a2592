"""``interpolate`` on uint8 (bilinear, bicubic) in PyTorch's fixed point: int16 weights, rounding half up
after every axis, clamping to [0, 255]; and the dtypes each mode refuses, as PyTorch's CPU kernels."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn import functional as F


def test_bilinear_uint8_rounds_half_up():
    # float64 values 0, 0.5, 1.5, 2: round half up gives 0, 1, 2, 2 (NumPy's half-to-even would give 0, 0, 2, 2)
    y = F.interpolate(mt.tensor([[[[0, 2]]]], dtype=mt.uint8), size=(1, 4), mode="bilinear")
    assert y.dtype == mt.uint8 and y.tolist() == [[[[0, 1, 2, 2]]]]


@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_uint8_clamps_and_stays_within_one_of_the_float_result(align_corners):
    x = np.array([[0, 0, 255, 255, 0, 255]], dtype=np.uint8)[None, None].repeat(3, 2)
    y = F.interpolate(mt.tensor(x), size=(5, 13), mode="bicubic", align_corners=align_corners).numpy()
    f = F.interpolate(mt.tensor(x.astype(np.float64)), size=(5, 13), mode="bicubic",
                      align_corners=align_corners).numpy()
    assert y.dtype == np.uint8 and f.min() < 0 and f.max() > 255  # the cubic overshoots: clamped
    assert np.abs(y.astype(np.float64) - np.clip(np.floor(f + 0.5), 0, 255)).max() <= 1


def test_uint8_same_size_is_a_copy():
    x = mt.tensor(np.arange(12, dtype=np.uint8).reshape(1, 1, 3, 4))
    for mode in ("bilinear", "bicubic"):
        assert F.interpolate(x, size=(3, 4), mode=mode).tolist() == x.tolist()


@pytest.mark.parametrize("dtype, mode, kernel", [
    (mt.int64, "nearest", "compute_indices_weights_nearest\" not implemented for 'Long'"),
    (mt.int32, "nearest-exact", "not implemented for 'Int'"), (mt.bool, "nearest", "not implemented for 'Bool'"),
    (mt.uint8, "linear", "compute_indices_weights_linear\" not implemented for 'Byte'"),
    (mt.uint8, "trilinear", "not implemented for 'Byte'"), (mt.uint8, "area", "adaptive_avg_pool2d"),
    (mt.int8, "bilinear", "not implemented for 'Char'"), (mt.int16, "bicubic", "not implemented for 'Short'"),
    (mt.int64, "area", "not implemented for 'Long'")])
def test_dtypes_pytorch_refuses(dtype, mode, kernel):
    nd = {"linear": 3, "trilinear": 5}.get(mode, 4)
    with pytest.raises(NotImplementedError, match=kernel):
        F.interpolate(mt.ones(*(1, 2) + (3,) * (nd - 2), dtype=dtype), size=(4,) * (nd - 2), mode=mode)


@pytest.mark.torch
def test_uint8_matches_pytorch_exactly():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for _ in range(300):
        mode, ac = str(rng.choice(["bilinear", "bicubic"])), bool(rng.integers(2))
        # width >= 2: PyTorch 2.13's AVX kernel mis-reads a (N, C > 4, H, 1) tensor (channels-last ambiguity)
        h, w = (int(v) for v in rng.integers(2, 9, 2))
        x = rng.integers(0, 256, (2, int(rng.integers(1, 4)), h, w)).astype(np.uint8)
        if rng.integers(2):
            kw: dict = {"size": tuple(int(v) for v in rng.integers(2, 13, 2))}
        else:
            kw = {"scale_factor": tuple(float(v) for v in rng.choice([0.5, 0.7, 1.3, 1.5, 2.0, 2.5, 3.0], 2))}
            if min(int(h * kw["scale_factor"][0]), int(w * kw["scale_factor"][1])) < 2:
                continue
        want = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode, align_corners=ac, **kw).numpy()
        got = F.interpolate(mt.tensor(x), mode=mode, align_corners=ac, **kw).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{mode} align_corners={ac} {x.shape} {kw}")


@pytest.mark.torch
def test_dtype_acceptance_matches_pytorch():
    torch = pytest.importorskip("torch")
    nds = {"nearest": 3, "nearest-exact": 4, "linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5, "area": 4}
    for name in ("uint8", "int8", "int16", "int32", "int64", "bool", "float32", "float64"):
        for mode, nd in nds.items():
            shape, size = (1, 2) + (3,) * (nd - 2), (4,) * (nd - 2)
            try:
                torch.nn.functional.interpolate(torch.ones(shape, dtype=getattr(torch, name)), size=size, mode=mode)
                theirs = None
            except NotImplementedError as e:
                theirs = str(e)
            try:
                F.interpolate(mt.ones(*shape, dtype=getattr(mt, name)), size=size, mode=mode)
                ours = None
            except NotImplementedError as e:
                ours = str(e)
            # the kernel PyTorch names varies with the memory format; the dtype it names does not
            tail = None if theirs is None else theirs.split('"')[-1]
            assert (ours is None) == (theirs is None), (name, mode, ours, theirs)
            assert ours is None or ours.endswith(tail), (ours, theirs)
