"""Small PyTorch mismatches of issue 25: median / nanmedian of an empty tensor with requires_grad (nan, an
empty gradient), nanmedian's error naming median; dropout2d / dropout3d on 0-, 1- and 2-D inputs (PyTorch's
warnings, p = 0 / p = 1 / eval before the 2-dim check, dropout3d's unbatched channels); vander's gradient at
NaN / inf; quantile / nanquantile with +-inf (lerp's a + (b - a) t). References: NumPy float64, written here."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn import functional as F


@pytest.mark.parametrize("fn", [mt.median, mt.nanmedian])
def test_median_of_empty_with_grad(fn):
    x = mt.zeros(0, requires_grad=True)
    y = fn(x)
    y.backward()
    assert math.isnan(y.item()) and x.grad is not None and x.grad.shape == (0,)


def test_nanmedian_reduction_error_names_median():
    with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 1 to have non-zero size"):
        mt.nanmedian(mt.zeros(2, 0), dim=1)


@pytest.mark.parametrize("fn, ndim", [(F.dropout2d, 1), (F.dropout2d, 0), (F.dropout3d, 1), (F.dropout3d, 0)])
def test_feature_dropout_of_few_dims_warns_and_passes_through(fn, ndim):
    x = mt.full((3,) * ndim, math.nan)
    with pytest.warns(UserWarning, match=f"Received a {ndim}-D input to {fn.__name__}.*Note that {fn.__name__} "
                                         "exists to provide channel-wise dropout"):
        assert fn(x, 0.5, training=False) is x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fn(x, 0.0) is x and fn(mt.zeros(0), 0.5) is not None
        y = fn(x, 1.0)  # input * 0: NaN stays NaN
        assert y.shape == x.shape and np.isnan(y.numpy()).all()


def test_feature_dropout_channels_of_unbatched_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
            F.dropout2d(mt.ones(3), 0.5)
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
            F.dropout3d(mt.ones(()), 0.5)
        mt.manual_seed(0)
        y = F.dropout3d(mt.ones(64, 3, 2), 0.5).numpy()  # unbatched (C, ...): one factor per x[c]
        assert set(np.unique(y)) <= {0.0, 2.0} and (y == y[:, :1, :1]).all() and 0 < (y[:, 0, 0] == 0).sum() < 64
        assert F.dropout3d(mt.ones(5), 0.5).shape == (5,)  # channels along the only dim


def test_vander_gradient_at_nan_inf_and_zero():
    x = mt.tensor([1.0, math.nan, 2.0, 0.0, math.inf], dtype=mt.float64, requires_grad=True)
    mt.vander(x, N=3).sum().backward()  # d(x^2 + x + 1) = 2x + 1, through a cumulative product: inf * 0 -> NaN
    g = x.grad.numpy()
    assert g[[0, 2, 3]].tolist() == [3.0, 5.0, 1.0] and np.isnan(g[1]) and np.isnan(g[4])


@pytest.mark.parametrize("vals", [[math.inf, -math.inf], [1.0, math.inf], [-math.inf, 1.0, math.inf],
                                  [-math.inf, -math.inf, 2.0]])
def test_quantile_with_infinities_is_lerp(vals):
    q = np.array([0.0, 0.25, 0.5, 1.0])
    s = np.sort(np.array(vals))
    pos = q * (len(vals) - 1)
    a, b, t = s[np.floor(pos).astype(int)], s[np.ceil(pos).astype(int)], pos - np.floor(pos)
    with np.errstate(invalid="ignore"):  # PyTorch's lerp: a + (b - a) t below t = 1/2, b - (b - a)(1 - t) above
        want = np.where(t < 0.5, a + (b - a) * t, b - (b - a) * (1 - t))
    for fn in (mt.quantile, mt.nanquantile):
        got = fn(mt.tensor(vals, dtype=mt.float64), mt.tensor(q, dtype=mt.float64)).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.torch
def test_edges_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("median", "nanmedian"):
        xs = [lib.zeros(0, requires_grad=True) for lib in (torch, mt)]
        ys = [getattr(lib, name)(x) for lib, x in zip((torch, mt), xs)]
        for y in ys:
            y.backward()
        assert math.isnan(ys[1].item()) and xs[0].grad.shape == tuple(xs[1].grad.shape)
    for fname in ("dropout2d", "dropout3d"):
        for shape in [(), (0,), (3,), (2, 3), (4, 2, 3)]:
            for p in (0.0, 0.5, 1.0):
                for training in (True, False):
                    got = []
                    for lib, fn in ((torch, torch.nn.functional), (mt, F)):
                        with warnings.catch_warnings(record=True) as w:
                            warnings.simplefilter("always")
                            try:
                                y = getattr(fn, fname)(lib.full(shape, math.nan), p, training=training)
                                r = ("ok", tuple(y.shape), int(y.isnan().sum().item()) if y.numel() else 0)
                            except RuntimeError as e:
                                r = ("error", str(e))
                        got.append((r, [str(m.message) for m in w]))
                    assert got[0] == got[1], (fname, shape, p, training)
    x = torch.tensor([1.0, math.nan, 2.0, 0.0, math.inf], dtype=torch.float64, requires_grad=True)
    torch.linalg.vander(x, N=3).sum().backward()  # torch.vander's own backward fails in 2.13 (an in-place op)
    ours = mt.tensor([1.0, math.nan, 2.0, 0.0, math.inf], dtype=mt.float64, requires_grad=True)
    mt.vander(ours, N=3).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), x.grad.numpy())
    q = [0.0, 0.25, 0.5, 1.0]
    for vals in ([math.inf, -math.inf], [1.0, math.inf], [-math.inf, 1.0, math.inf], [math.nan, math.inf, 1.0]):
        for name in ("quantile", "nanquantile"):
            for interpolation in ("linear", "lower", "higher", "midpoint", "nearest"):
                theirs = getattr(torch, name)(torch.tensor(vals, dtype=torch.float64),
                                              torch.tensor(q, dtype=torch.float64),
                                              interpolation=interpolation).numpy()
                got = getattr(mt, name)(mt.tensor(vals, dtype=mt.float64), mt.tensor(q, dtype=mt.float64),
                                        interpolation=interpolation).numpy()
                np.testing.assert_array_equal(got, theirs)


# ------------------------------------------------- found by the one-tensor sweep's +-inf and -0 inputs
def test_prod_gradient_as_pytorch_with_zeros_and_infinities():
    inf = math.inf
    for v, dim, want in (([inf, -inf, -0.0, 0.0, 1.5], None, [0.0] * 5),  # two zeros: all 0 (whole tensor)
                         ([inf, 2.0, 3.0], None, [math.nan, inf, inf]),  # no zero: prod / x_i
                         ([inf, 2.0, 0.0], 0, [0.0, math.nan, inf]),  # a zero: the exclusive products
                         ([1.0, 2.0, 3.0], 0, [6.0, 3.0, 2.0])):
        x = mt.tensor(v, requires_grad=True)
        with np.errstate(invalid="ignore"):
            (mt.prod(x) if dim is None else mt.prod(x, dim)).backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.array(want, dtype=np.float32))


def test_erfc_and_ndtr_of_0d_tails():
    assert mt.special.ndtr(mt.tensor(-math.inf)).item() == 0.0 and mt.erfc(mt.tensor(math.inf)).item() == 0.0
    assert mt.erfc(mt.tensor(5.0, dtype=mt.float64)).item() == pytest.approx(math.erfc(5.0), rel=1e-14)


def test_logit_gradient_at_zero_and_one_is_plus_inf():
    x = mt.tensor([0.0, -0.0, 1.0, 0.5], requires_grad=True)
    mt.logit(x).sum().backward()
    assert x.grad.tolist() == [math.inf, math.inf, math.inf, 4.0]


def test_polygamma_at_the_infinities():
    inf = math.inf
    y1 = mt.special.polygamma(1, mt.tensor([-inf, inf])).numpy()
    y2 = mt.special.polygamma(2, mt.tensor([-inf, inf])).numpy()
    assert math.isnan(y1[0]) and y1[1] == 0.0 and y2[0] == -inf and math.isnan(y2[1])
    x = mt.tensor([-inf, 1.0], requires_grad=True)
    mt.digamma(x).sum().backward()  # digamma's gradient is trigamma
    assert math.isnan(x.grad[0].item()) and x.grad[1].item() == pytest.approx(math.pi ** 2 / 6, rel=1e-6)


def test_softsign_gradient_at_infinity_is_nan():
    x = mt.tensor([math.inf, -math.inf, 1.0, 0.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        F.softsign(x).sum().backward()
    g = x.grad.numpy()
    assert np.isnan(g[:2]).all() and g[2:].tolist() == [0.25, 1.0]  # 1 / (1 + |x|)^2


@pytest.mark.parametrize("fn", [F.elu, F.celu, F.selu, F.softshrink])
def test_negative_zero_keeps_its_sign(fn):
    y = fn(mt.tensor([-0.0, 0.0, -0.25]))
    assert np.signbit(y.numpy()[0]) and not np.signbit(y.numpy()[1])
    if fn is F.softshrink:  # inside the bounds: x * 0, so -0 for a negative x
        assert np.signbit(y.numpy()[2]) and y.numpy()[2] == 0.0
