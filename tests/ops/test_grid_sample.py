"""affine_grid and grid_sample without PyTorch: identity and shifts, a float64 reference by explicit formula
(loops over a small input), finite-difference gradients w.r.t. input, grid and theta, non-finite grids,
errors and the align_corners warning."""
import itertools
import math
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from tests.helpers import as_np, assert_close, check_grad

PADS = ["zeros", "border", "reflection"]


# ----------------------------------------------------------------------------------- the reference
def _unnorm(c, n, ac):
    return (c + 1) / 2 * (n - 1) if ac else ((c + 1) * n - 1) / 2


def _reflect(x, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = abs(x - lo)
    extra = math.fmod(x, span)
    return extra + lo if math.floor(x / span) % 2 == 0 else span - extra + lo


def _pad(x, n, pad, ac):
    if pad == "reflection":
        x = _reflect(x, *((0, 2 * (n - 1)) if ac else (-1, 2 * n - 1)))
    if pad in ("border", "reflection"):
        x = min(max(x, 0.0), n - 1.0)
    return x


def _value(img, idx):
    """img[idx] (idx x first), 0 outside."""
    spatial = img.shape[::-1]
    if all(0 <= i < n for i, n in zip(idx, spatial)):
        return img[tuple(int(i) for i in idx[::-1])]
    return 0.0


def _cubic(d):
    a, d = -0.75, abs(d)
    return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1 if d <= 1 else a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a


def reference(x, grid, mode, pad, ac):
    """grid_sample by its definition, one output at a time."""
    n, c = x.shape[:2]
    spatial = x.shape[2:][::-1]  # x first
    out = np.zeros((n, c) + grid.shape[1:-1])
    for b, ch in itertools.product(range(n), range(c)):
        img = x[b, ch]
        for p in itertools.product(*[range(s) for s in grid.shape[1:-1]]):
            pos = [_unnorm(v, s, ac) for v, s in zip(grid[(b, *p)], spatial)]
            if mode == "bicubic":
                lo = [math.floor(v) for v in pos]
                total = 0.0
                for taps in itertools.product(range(-1, 3), repeat=2):
                    w = math.prod(_cubic(v - (f + t)) for v, f, t in zip(pos, lo, taps))
                    idx = [math.floor(_pad(f + t, s, pad, ac)) for f, t, s in zip(lo, taps, spatial)]
                    total += w * _value(img, idx)
                out[(b, ch, *p)] = total
                continue
            pos = [_pad(v, s, pad, ac) for v, s in zip(pos, spatial)]
            if mode == "nearest":
                out[(b, ch, *p)] = _value(img, [np.rint(v) for v in pos])
                continue
            lo = [math.floor(v) for v in pos]
            out[(b, ch, *p)] = sum(math.prod(1 - abs(v - (f + k)) for v, f, k in zip(pos, lo, corner))
                                   * _value(img, [f + k for f, k in zip(lo, corner)])
                                   for corner in itertools.product((0, 1), repeat=len(pos)))
    return out


def smooth_grid(seed, shape, spatial, ac, spread=1.5):
    """Grid points whose pixel positions keep 0.1 away from whole and half pixels (the kinks of the
    interpolation weights and of the border / reflection folds), some outside the input."""
    rng = np.random.default_rng(seed)
    d = len(spatial)
    sizes = spatial[::-1]
    pos = []
    for k in range(d):
        n = sizes[k]
        whole = rng.integers(-2, n + 1, size=shape)
        frac = rng.uniform(0.15, 0.35, size=shape) + 0.5 * rng.integers(0, 2, size=shape)
        p = whole + frac
        pos.append(p / (n - 1) * 2 - 1 if ac else (2 * p + 1) / n - 1)
    return np.stack(pos, -1) * min(1.0, spread)


# -------------------------------------------------------------------------------------------- values
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_identity_theta_reproduces_the_input(mode):
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    theta = mt.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=True)
    assert_close(F.grid_sample(mt.tensor(x), grid, mode=mode, align_corners=True), x, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_identity_theta_reproduces_the_input_5d(mode):
    x = np.random.default_rng(1).standard_normal((2, 2, 3, 4, 5))
    grid = F.affine_grid(mt.tensor(np.tile(np.eye(3, 4), (2, 1, 1))), (2, 2, 3, 4, 5), align_corners=False)
    assert_close(F.grid_sample(mt.tensor(x), grid, mode=mode, align_corners=False), x, atol=1e-12)


@pytest.mark.parametrize("pad", ["zeros", "border"])
def test_a_one_pixel_shift(pad):
    x = np.arange(20.0).reshape(1, 1, 4, 5)
    theta = np.array([[[1.0, 0, 2 / 4], [0, 1, 0]]])  # x + one pixel (align_corners: 2 / (W - 1))
    grid = F.affine_grid(mt.tensor(theta), (1, 1, 4, 5), align_corners=True)
    y = as_np(F.grid_sample(mt.tensor(x), grid, padding_mode=pad, align_corners=True))
    assert_close(y[..., :4], x[..., 1:], atol=1e-12)
    assert_close(y[..., 4], x[..., 4] if pad == "border" else np.zeros((1, 1, 4)), atol=1e-12)


def test_affine_grid_by_formula():
    theta = np.random.default_rng(2).standard_normal((2, 2, 3))
    for ac in (False, True):
        xs = np.linspace(-1, 1, 4) * (1 if ac else 3 / 4)
        ys = np.linspace(-1, 1, 3) * (1 if ac else 2 / 3)
        base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1)  # (3, 4, 3)
        assert_close(F.affine_grid(mt.tensor(theta), (2, 5, 3, 4), align_corners=ac),
                     np.einsum("hwk,njk->nhwj", base, theta), atol=1e-12)
    one = F.affine_grid(mt.tensor(theta), (2, 1, 1, 1), align_corners=False)  # a single point is 0
    assert_close(one, theta[:, None, None, :, 2], atol=1e-12)


@pytest.mark.parametrize("mode,pad,ac", [(m, p, a) for m in ["bilinear", "nearest", "bicubic"] for p in PADS
                                         for a in (False, True)])
def test_matches_the_reference_2d(mode, pad, ac):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2, 3, 4))
    grid = rng.uniform(-1.7, 1.7, (2, 3, 5, 2))
    y = F.grid_sample(mt.tensor(x), mt.tensor(grid), mode=mode, padding_mode=pad, align_corners=ac)
    assert_close(y, reference(x, grid, mode, pad, ac), atol=1e-12)


@pytest.mark.parametrize("mode,pad,ac", [(m, p, a) for m in ["bilinear", "nearest"] for p in PADS
                                         for a in (False, True)])
def test_matches_the_reference_3d(mode, pad, ac):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 2, 2, 3, 4))
    grid = rng.uniform(-1.7, 1.7, (2, 2, 2, 3, 3))
    y = F.grid_sample(mt.tensor(x), mt.tensor(grid), mode=mode, padding_mode=pad, align_corners=ac)
    assert_close(y, reference(x, grid, mode, pad, ac), atol=1e-12)


def test_float32_stays_float32_and_size_one_axes():
    x = mt.tensor(np.arange(6.0, dtype=np.float32).reshape(1, 1, 1, 6))
    grid = mt.tensor(np.array([[[[0.1, 0.7], [-1.0, 0.0]]]], dtype=np.float32))
    for ac in (False, True):
        for pad in PADS:
            y = F.grid_sample(x, grid, padding_mode=pad, align_corners=ac)
            assert y.dtype == mt.float32
            assert_close(y, reference(as_np(x).astype(np.float64), as_np(grid).astype(np.float64), "bilinear", pad,
                                      ac), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("pad,ac", [(p, a) for p in PADS for a in (False, True)])
def test_bilinear_gradients_by_finite_differences(pad, ac):
    x = np.random.default_rng(5).standard_normal((2, 2, 3, 4))
    grid = smooth_grid(6, (2, 2, 3), (3, 4), ac)
    check_grad(lambda a, g: F.grid_sample(a, g, padding_mode=pad, align_corners=ac), x, grid)


@pytest.mark.parametrize("pad", PADS)
def test_bilinear_gradients_5d(pad):
    x = np.random.default_rng(7).standard_normal((1, 2, 2, 3, 3))
    grid = smooth_grid(8, (1, 2, 2, 2), (2, 3, 3), False)
    check_grad(lambda a, g: F.grid_sample(a, g, padding_mode=pad, align_corners=False), x, grid)


@pytest.mark.parametrize("pad", PADS)
def test_bicubic_gradients(pad):
    x = np.random.default_rng(9).standard_normal((1, 2, 4, 4))
    grid = smooth_grid(10, (1, 2, 3), (4, 4), True)
    check_grad(lambda a, g: F.grid_sample(a, g, mode="bicubic", padding_mode=pad, align_corners=True), x, grid)


def test_nearest_gradients():
    x = mt.tensor(np.random.default_rng(11).standard_normal((1, 1, 3, 3)), requires_grad=True)
    grid = mt.tensor(smooth_grid(12, (1, 4, 4), (3, 3), False), requires_grad=True)
    check_grad(lambda a: F.grid_sample(a, grid.detach(), mode="nearest", align_corners=False), as_np(x))
    F.grid_sample(x, grid, mode="nearest", align_corners=False).sum().backward()
    assert grid.grad is not None and not as_np(grid.grad).any()  # zeros, as PyTorch's


def test_affine_grid_then_sample_gradient_wrt_theta():
    x = np.random.default_rng(13).standard_normal((2, 1, 4, 4))
    theta = np.array([[[0.9, 0.1, 0.05], [-0.1, 0.8, 0.1]], [[1.1, 0.0, -0.1], [0.2, 0.7, 0.0]]])
    check_grad(lambda a, t: F.grid_sample(a, F.affine_grid(t, (2, 1, 3, 3), align_corners=False),
                                          align_corners=False), x, theta)


# -------------------------------------------------------------------------------- non-finite and errors
def test_nonfinite_grid():
    x = mt.tensor(np.arange(12.0).reshape(1, 1, 3, 4))
    grid = mt.tensor(np.array([[[[np.nan, 0.0], [np.inf, 0.0], [0.2, -np.inf]]]]))
    # zeros: NaN for bilinear (NaN weights), 0 for nearest (no tap is in range)
    assert np.isnan(as_np(F.grid_sample(x, grid, align_corners=False))).all()
    assert_close(F.grid_sample(x, grid, mode="nearest", align_corners=False), np.zeros((1, 1, 1, 3)))
    # border: NaN becomes coordinate 0, inf the far edge; reflection sends inf to NaN, then to 0
    assert_close(F.grid_sample(x, grid, padding_mode="border", align_corners=False), [[[[4.0, 7.0, 1.9]]]], rtol=1e-12)
    assert_close(F.grid_sample(x, grid, padding_mode="reflection", align_corners=False), [[[[4.0, 4.0, 1.9]]]],
                 rtol=1e-12)
    assert np.isnan(as_np(F.grid_sample(x, grid, mode="bicubic", padding_mode="border", align_corners=False))).all()


def test_nonfinite_grid_5d():
    """PyTorch's 3-d kernel skips outside corners (NaN coordinates read 0) and clips NaN to the far edge."""
    x = mt.tensor(np.arange(24.0).reshape(1, 1, 2, 3, 4))
    grid = mt.tensor(np.array([[[[[np.nan, 0.0, 0.0], [np.inf, 0.0, 0.0], [-np.inf, 0.0, 0.0]]]]]))
    assert_close(F.grid_sample(x, grid, align_corners=True), np.zeros((1, 1, 1, 1, 3)))
    assert_close(F.grid_sample(x, grid, padding_mode="border", align_corners=True), [[[[[13.0, 13.0, 10.0]]]]])
    assert_close(F.grid_sample(x, grid, padding_mode="reflection", align_corners=True), [[[[[13.0, 13.0, 13.0]]]]])
    assert_close(F.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=True),
                 [[[[[7.0, 7.0, 4.0]]]]])
    neg = F.grid_sample(-mt.zeros(1, 1, 2, 2, 2), mt.zeros(1, 1, 1, 1, 3), align_corners=False)
    assert math.copysign(1.0, float(as_np(neg).ravel()[0])) == 1.0  # summed from +0, as PyTorch's


def test_an_inf_pixel_reaches_only_the_outputs_whose_corners_hold_it():
    """A zero-weight corner holding inf makes NaN, as PyTorch's kernel (0 * inf); a masked corner reads 0."""
    x = np.zeros((1, 1, 2, 2))
    x[0, 0, 1, 1] = np.inf
    grid = mt.tensor(np.array([[[[-1.0, -1.0], [5.0, 5.0], [-1.0, 1.0]]]]))
    y = as_np(F.grid_sample(mt.tensor(x), grid, align_corners=True)).ravel()
    assert np.isnan(y[0]) and y[1] == 0 and np.isnan(y[2])


def test_errors_and_the_default_warning():
    x, g = mt.zeros(1, 1, 2, 2), mt.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(mt.zeros(1, 2, 3), (1, 1, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grid_sample(x, g, align_corners=False)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, g, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, g, padding_mode="circular", align_corners=False)
    with pytest.raises(RuntimeError, match="size 2 in last dimension"):
        F.grid_sample(x, mt.zeros(1, 1, 1, 3), align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, mt.zeros(2, 1, 1, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(mt.zeros(1, 1, 2, 2, 2), mt.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="non-empty spatial"):
        F.grid_sample(mt.zeros(1, 1, 0, 2), g, align_corners=False)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(mt.zeros(1, 3, 4), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(mt.zeros(1, 2, 3, dtype=mt.int64), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(mt.zeros(1, 2, 3), (1, 1, 2), align_corners=False)
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(mt.zeros(1, 2, 3), (1, 1, 1, 2), align_corners=True)


@pytest.mark.parametrize("pad", PADS)
def test_one_pixel_axes_give_a_zero_grid_gradient(pad):
    """A single pixel with align_corners reflects every coordinate to 0: the grid's gradient is zeros."""
    x = mt.tensor(np.array([[[[0.5]]]]), requires_grad=True)
    grid = mt.tensor(np.array([[[[-0.4, -0.8]]]]), requires_grad=True)
    F.grid_sample(x, grid, padding_mode=pad, align_corners=True).sum().backward()
    assert grid.grad is not None and not as_np(grid.grad).any()
