"""triplet_margin_with_distance_loss, the deprecated upsample_nearest / upsample_bilinear, CrossMapLRN2d
(float64 NumPy references and finite differences written here; PyTorch parity marked ``torch``)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F
from minitensor.testing import gradcheck
from tests.helpers import assert_close, t64


def _dist(a: np.ndarray, b: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    return np.sqrt(((a - b + eps) ** 2).sum(-1))  # pairwise_distance(p=2, eps): the norm of a - b + eps


# ------------------------------------------------------------------------ triplet with a distance
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_triplet_margin_with_distance_loss_default_distance(swap, reduction):
    r = np.random.default_rng(0)
    a, p, n = (r.standard_normal((6, 4)) for _ in range(3))
    d_neg = _dist(a, n)
    if swap:
        d_neg = np.minimum(d_neg, _dist(p, n))
    losses = np.maximum(0.7 + _dist(a, p) - d_neg, 0)
    ref = losses.mean() if reduction == "mean" else losses.sum() if reduction == "sum" else losses
    got = F.triplet_margin_with_distance_loss(t64(a, False), t64(p, False), t64(n, False), margin=0.7, swap=swap,
                                              reduction=reduction)
    assert_close(got, ref, rtol=1e-12)
    module = nn.TripletMarginWithDistanceLoss(margin=0.7, swap=swap, reduction=reduction)
    assert_close(module(t64(a, False), t64(p, False), t64(n, False)), ref, rtol=1e-12)


def test_triplet_margin_with_distance_loss_custom_distance_gradient_and_checks():
    r = np.random.default_rng(1)
    a, p, n = (r.standard_normal((5, 3)) for _ in range(3))

    def cos_dist(x, y):
        return 1 - F.cosine_similarity(x, y)
    m = nn.TripletMarginWithDistanceLoss(distance_function=cos_dist, margin=1.5, swap=True)
    assert gradcheck(lambda x, y, z: m(x, y, z), [t64(a), t64(p), t64(n)])
    cos = (a * n).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(n, axis=-1)
    cos_p = (p * n).sum(-1) / np.linalg.norm(p, axis=-1) / np.linalg.norm(n, axis=-1)
    cos_ap = (a * p).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(p, axis=-1)
    ref = np.maximum(1.5 + (1 - cos_ap) - np.minimum(1 - cos, 1 - cos_p), 0).mean()
    assert_close(m(t64(a, False), t64(p, False), t64(n, False)), ref, rtol=1e-10)
    assert isinstance(nn.TripletMarginWithDistanceLoss().distance_function, nn.PairwiseDistance)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(t64(a), t64(p), t64(n), margin=-1.0)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.triplet_margin_with_distance_loss(t64(a), t64(p), t64(n), reduction="avg")
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(t64(a), t64(p), t64(n[0]))
    with pytest.raises(TypeError):
        nn.TripletMarginWithDistanceLoss(cos_dist)  # type: ignore[misc]  # keyword-only, as PyTorch's


@pytest.mark.torch
def test_triplet_margin_with_distance_loss_matches_torch():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(2)
    a, p, n = (r.standard_normal((7, 5)) for _ in range(3))
    ours = [t64(v) for v in (a, p, n)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, p, n)]
    loss = nn.TripletMarginWithDistanceLoss(swap=True, margin=2.0)(*ours)
    tloss = torch.nn.TripletMarginWithDistanceLoss(swap=True, margin=2.0)(*theirs)
    loss.backward()
    tloss.backward()
    assert_close(loss, tloss.detach().numpy(), rtol=1e-12)
    for o, t in zip(ours, theirs):
        assert_close(o.grad, t.grad.numpy(), rtol=1e-10)


# ----------------------------------------------------------------------------- upsample wrappers
def test_upsample_nearest_and_bilinear_are_interpolate_with_a_warning():
    x = np.arange(2 * 3 * 2 * 3, dtype=np.float64).reshape(2, 3, 2, 3)
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        y = F.upsample_nearest(t64(x, False), scale_factor=2)
    assert_close(y, x.repeat(2, axis=2).repeat(2, axis=3))
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        y = F.upsample_bilinear(t64(x, False), size=(3, 5))
    # align_corners=True: output i samples the input at i * (in - 1) / (out - 1), separably
    rows = np.array([0, 0.5, 1.0])
    cols = np.array([0, 0.5, 1, 1.5, 2])
    ref_rows = x[:, :, :1] * (1 - rows[:, None]) + x[:, :, 1:] * rows[:, None]  # (2, 3, 3, 3)
    lo = np.floor(cols).astype(int).clip(max=1)
    ref = ref_rows[..., lo] * (1 - (cols - lo)) + ref_rows[..., lo + 1] * (cols - lo)
    assert_close(y, ref, rtol=1e-12)


@pytest.mark.torch
def test_upsample_wrappers_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4))
    with pytest.warns(UserWarning):
        assert_close(F.upsample_bilinear(t64(x, False), scale_factor=2),
                     torch.nn.functional.upsample_bilinear(torch.tensor(x), scale_factor=2).numpy(), rtol=1e-12)
    with pytest.warns(UserWarning):
        assert_close(F.upsample_nearest(t64(x, False), size=(5, 7)),
                     torch.nn.functional.upsample_nearest(torch.tensor(x), size=(5, 7)).numpy())


# ---------------------------------------------------------------------------------- CrossMapLRN2d
def _cross_map_lrn_ref(x: np.ndarray, size: int, alpha: float, beta: float, k: float) -> np.ndarray:
    """PyTorch's running-sum forward, written as its windows: channel 0 is never dropped from the sum."""
    channels, pre = x.shape[1], (size - 1) // 2 + 1
    sq = x ** 2
    s = np.zeros_like(x)
    for c in range(channels):
        lo, hi = max(0, c - pre + 1), min(channels - 1, c + pre - 1)
        s[:, c] = sq[:, lo:hi + 1].sum(1) + (sq[:, 0] if c >= pre else 0)
    return x * (s * alpha / size + k) ** -beta


@pytest.mark.parametrize("size, channels", [(1, 3), (2, 4), (3, 7), (4, 6), (5, 9), (5, 2)])
def test_cross_map_lrn2d_forward_and_gradient(size, channels):
    x = np.random.default_rng(size * 10 + channels).standard_normal((2, channels, 3, 2))
    m = nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.5)
    assert_close(m(t64(x, False)), _cross_map_lrn_ref(x, size, 0.5, 0.75, 1.5), rtol=1e-12)
    assert gradcheck(m, [t64(x)])


def test_cross_map_lrn2d_checks_and_repr():
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        nn.CrossMapLRN2d(3)(mt.randn(2, 3, 4))
    assert repr(nn.CrossMapLRN2d(5, 1e-3)) == "CrossMapLRN2d(5, alpha=0.001, beta=0.75, k=1)"
    y = nn.CrossMapLRN2d(3)(mt.randn(2, 4, 3, 3, dtype=mt.float32))
    assert y.dtype == mt.float32 and y.shape == (2, 4, 3, 3)


@pytest.mark.torch
def test_cross_map_lrn2d_forward_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((2, 10, 3, 3))
    for size in (3, 4, 5):
        ours = nn.CrossMapLRN2d(size, 0.3, 0.6, 2.0)(t64(x, False))
        theirs = torch.nn.CrossMapLRN2d(size, 0.3, 0.6, 2.0)(torch.tensor(x))
        assert_close(ours, theirs.numpy(), rtol=1e-12)
