"""Losses against float64 references written here with plain loops, PyTorch's reduction and label-smoothing
semantics, gradients by finite differences, and float32 stability at logits of +-1000."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=30, deadline=None)
REDUCTIONS = ["mean", "sum", "none"]


def f64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=mt.float64, requires_grad=requires_grad)


# ------------------------------------------------------------------------------------ references
def _rows(x):
    """(N, C, *) -> (rows, C) with the class axis last, one row per (n, *) position."""
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


def _log_softmax_row(row):
    m = max(row)
    return [v - m - math.log(sum(math.exp(u - m) for u in row)) for v in row]


def _reduce_ref(losses, reduction, divisor, shape):
    if reduction == "none":
        return np.array(losses).reshape(shape)
    total = sum(losses)
    return total if reduction == "sum" else total / divisor


def cross_entropy_ref(x, t, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """PyTorch's definition, row by row: (1 - eps) w_t (-log p_t) + eps / C sum_c w_c (-log p_c);
    'mean' divides by the summed w_t of rows whose target is not ignore_index."""
    n_classes = x.shape[1]
    w = np.ones(n_classes) if weight is None else weight
    losses, weight_sum = [], 0.0
    for row, target in zip(_rows(x), t.reshape(-1)):
        if target == ignore_index:
            losses.append(0.0)
            continue
        logp = _log_softmax_row(row)
        nll = -w[target] * logp[target]
        smooth = -sum(w[c] * logp[c] for c in range(n_classes))
        losses.append((1 - label_smoothing) * nll + label_smoothing / n_classes * smooth)
        weight_sum += w[target]
    return _reduce_ref(losses, reduction, weight_sum, t.shape)


def cross_entropy_probs_ref(x, target, weight=None, reduction="mean", label_smoothing=0.0):
    n_classes = x.shape[1]
    w = np.ones(n_classes) if weight is None else weight
    losses = []
    for row, probs in zip(_rows(x), _rows(target)):
        logp = _log_softmax_row(row)
        smoothed = [(1 - label_smoothing) * p + label_smoothing / n_classes for p in probs]
        losses.append(-sum(w[c] * smoothed[c] * logp[c] for c in range(n_classes)))
    shape = (x.shape[0],) + x.shape[2:]
    return _reduce_ref(losses, reduction, len(losses), shape)


def nll_ref(x, t, weight=None, ignore_index=-100, reduction="mean"):
    w = np.ones(x.shape[1]) if weight is None else weight
    losses, weight_sum = [], 0.0
    for row, target in zip(_rows(x), t.reshape(-1)):
        if target == ignore_index:
            losses.append(0.0)
            continue
        losses.append(-w[target] * row[target])
        weight_sum += w[target]
    return _reduce_ref(losses, reduction, weight_sum, t.shape)


def bce_ref(x, t, w=1.0):
    log_x = np.maximum(np.log(x), -100)
    log_1mx = np.maximum(np.log(1 - x), -100)
    return -w * (t * log_x + (1 - t) * log_1mx)


def bce_logits_ref(x, t, w=1.0, pos_weight=1.0):
    s = 1 / (1 + np.exp(-x))
    return -w * (pos_weight * t * np.log(s) + (1 - t) * np.log(1 - s))


def _apply_reduction(values, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](values)


# ------------------------------------------------------------------------------ cross-entropy
@st.composite
def class_problems(draw):
    n = draw(st.integers(1, 4))
    c = draw(st.integers(2, 5))
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 3, size=(n, c) + spatial)
    t = rng.integers(0, c, size=(n,) + spatial)
    ignore_index = draw(st.sampled_from([-100, 0, 1]))
    if draw(st.booleans()):
        t[rng.random(t.shape) < 0.3] = ignore_index
    weight = rng.uniform(0.2, 2.0, size=c) if draw(st.booleans()) else None
    return x, t, weight, ignore_index


@SETTINGS
@given(problem=class_problems(), reduction=st.sampled_from(REDUCTIONS),
       label_smoothing=st.sampled_from([0.0, 0.1, 0.45, 1.0]))
def test_cross_entropy_matches_pytorch_definition(problem, reduction, label_smoothing):
    x, t, weight, ignore_index = problem
    assume(reduction != "mean" or (t != ignore_index).any())
    w = None if weight is None else f64(weight)
    kwargs = dict(ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing)
    got = F.cross_entropy(f64(x), mt.tensor(t), weight=w, **kwargs)
    expected = cross_entropy_ref(x, t, weight, **kwargs)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    got32 = F.cross_entropy(mt.tensor(x, dtype=mt.float32), mt.tensor(t),
                            weight=None if weight is None else mt.tensor(weight, dtype=mt.float32), **kwargs)
    assert got32.dtype == mt.float32
    np.testing.assert_allclose(got32.numpy(), expected, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(problem=class_problems(), reduction=st.sampled_from(REDUCTIONS),
       label_smoothing=st.sampled_from([0.0, 0.2]))
def test_cross_entropy_gradients(problem, reduction, label_smoothing):
    x, t, weight, ignore_index = problem
    assume(reduction != "mean" or (t != ignore_index).any())
    w = None if weight is None else f64(weight)
    target = mt.tensor(t)
    gradcheck(lambda z: F.cross_entropy(z, target, weight=w, ignore_index=ignore_index, reduction=reduction,
                                        label_smoothing=label_smoothing), (f64(x, True),))


def test_cross_entropy_gradient_known_value():
    """d mean CE / d logits = (softmax - onehot) / N."""
    x = np.random.default_rng(0).normal(size=(4, 3))
    t = np.array([0, 2, 1, 2])
    z = f64(x, True)
    F.cross_entropy(z, mt.tensor(t)).backward()
    p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    np.testing.assert_allclose(z.grad.numpy(), (p - np.eye(3)[t]) / 4, rtol=1e-12)


def test_cross_entropy_is_one_fused_node_saving_log_probabilities():
    x = mt.randn(5, 4, requires_grad=True)
    loss = F.cross_entropy(x, mt.tensor([0, 1, 2, 3, 0]))
    ((node, i),) = loss.grad_fn.next_functions
    assert node.variable is x and i == 0
    log_probs = loss.grad_fn.saved_arrays[0]
    np.testing.assert_allclose(log_probs, F.log_softmax(x, 1).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_cross_entropy_all_ignored_mean_is_nan_like_pytorch():
    with np.errstate(invalid="ignore", divide="ignore"):
        loss = F.cross_entropy(mt.randn(2, 3), mt.tensor([-100, -100]))
    assert math.isnan(loss.item())
    assert F.cross_entropy(mt.randn(2, 3), mt.tensor([-100, -100]), reduction="sum").item() == 0.0


def test_cross_entropy_unbatched_input():
    x = np.array([0.5, -1.0, 2.0])
    got = F.cross_entropy(f64(x), mt.tensor(2))
    assert got.shape == ()
    np.testing.assert_allclose(got.item(), cross_entropy_ref(x[None], np.array([2])), rtol=1e-12)
    assert F.cross_entropy(f64(x), mt.tensor(2), reduction="none").shape == ()


@SETTINGS
@given(n=st.integers(1, 4), c=st.integers(2, 5), spatial=st.lists(st.integers(1, 3), max_size=2),
       seed=st.integers(0, 2 ** 16), weighted=st.booleans(), reduction=st.sampled_from(REDUCTIONS),
       label_smoothing=st.sampled_from([0.0, 0.3]))
def test_cross_entropy_with_probability_targets(n, c, spatial, seed, weighted, reduction, label_smoothing):
    rng = np.random.default_rng(seed)
    shape = (n, c) + tuple(spatial)
    x = rng.normal(0, 3, size=shape)
    target = rng.dirichlet(np.ones(c), size=(n,) + tuple(spatial))
    target = np.ascontiguousarray(np.moveaxis(target, -1, 1))
    weight = rng.uniform(0.2, 2.0, size=c) if weighted else None
    w = None if weight is None else f64(weight)
    kwargs = dict(reduction=reduction, label_smoothing=label_smoothing)
    got = F.cross_entropy(f64(x), f64(target), weight=w, **kwargs)
    np.testing.assert_allclose(got.numpy(), cross_entropy_probs_ref(x, target, weight, **kwargs), rtol=1e-10,
                               atol=1e-12)
    gradcheck(lambda z, p: F.cross_entropy(z, p, weight=w, **kwargs), (f64(x, True), f64(target, True)))


def test_cross_entropy_is_stable_at_huge_logits_in_float32():
    x = mt.tensor([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 1000.0], [0.0, 0.0, -1000.0]],
                  requires_grad=True)
    t = mt.tensor([1, 0, 2])
    for kwargs in ({}, {"label_smoothing": 0.1}, {"weight": mt.tensor([1.0, 2.0, 0.5])}):
        x.grad = None
        loss = F.cross_entropy(x, t, **kwargs)
        loss.backward()
        assert loss.dtype == mt.float32 and x.grad.dtype == mt.float32
        assert math.isfinite(loss.item())
        assert np.isfinite(x.grad.numpy()).all()
    plain = F.cross_entropy(x, t, reduction="none").detach().numpy()
    np.testing.assert_allclose(plain, [2000.0, 2000.0 + math.log(2), 1000.0 + math.log(2)], rtol=1e-6)


def test_cross_entropy_rejects_bad_targets():
    x = mt.randn(3, 4)
    with pytest.raises(IndexError, match=r"target 4 .*4 classes"):
        F.cross_entropy(x, mt.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="target -1"):
        F.cross_entropy(x, mt.tensor([0, -1, 1]))
    F.cross_entropy(x, mt.tensor([0, -1, 1]), ignore_index=-1)  # ignored: fine
    with pytest.raises(ValueError, match=r"\(3,\).*\(3, 4\).*\(2,\)"):
        F.cross_entropy(x, mt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(x, mt.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match="floating point"):
        F.cross_entropy(x, mt.zeros(3, 4, dtype=mt.int64))
    with pytest.raises(ValueError, match=r"\(4,\)"):
        F.cross_entropy(x, mt.tensor([0, 1, 2]), weight=mt.ones(3))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, mt.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, mt.tensor([0, 1, 2]), reduction="avg")


# ---------------------------------------------------------------------------------------- nll
@SETTINGS
@given(problem=class_problems(), reduction=st.sampled_from(REDUCTIONS))
def test_nll_loss_forward_and_gradient(problem, reduction):
    x, t, weight, ignore_index = problem
    assume(reduction != "mean" or (t != ignore_index).any())
    w = None if weight is None else f64(weight)
    target = mt.tensor(t)
    got = F.nll_loss(f64(x), target, weight=w, ignore_index=ignore_index, reduction=reduction)
    np.testing.assert_allclose(got.numpy(), nll_ref(x, t, weight, ignore_index, reduction), rtol=1e-12,
                               atol=1e-14)
    gradcheck(lambda z: F.nll_loss(z, target, weight=w, ignore_index=ignore_index, reduction=reduction),
              (f64(x, True),))


def test_nll_of_log_softmax_equals_cross_entropy():
    x = mt.randn(6, 5, 2)
    t = mt.tensor(np.random.default_rng(0).integers(0, 5, size=(6, 2)))
    w = mt.rand(5) + 0.1
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(x, 1), t, w).item(), F.cross_entropy(x, t, w).item(),
                               rtol=1e-5)


def test_nll_loss_rejects_bad_targets():
    with pytest.raises(IndexError, match=r"target 7 .*3 classes"):
        F.nll_loss(mt.randn(2, 3), mt.tensor([7, 0]))


# ---------------------------------------------------------------------------------------- binary
@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 2 ** 16),
       weighted=st.booleans(), reduction=st.sampled_from(REDUCTIONS))
def test_binary_cross_entropy(shape, seed, weighted, reduction):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.05, 0.95, size=shape)
    t = rng.uniform(0, 1, size=shape)
    w = rng.uniform(0.5, 2, size=shape[-1:]) if weighted else None
    wt = None if w is None else f64(w)
    got = F.binary_cross_entropy(f64(x), f64(t), weight=wt, reduction=reduction)
    expected = _apply_reduction(bce_ref(x, t, 1.0 if w is None else w), reduction)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    gradcheck(lambda a, b: F.binary_cross_entropy(a, b, weight=wt, reduction=reduction),
              (f64(x, True), f64(t, True)))


def test_binary_cross_entropy_clamps_logs_at_minus_100():
    x = mt.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    t = mt.tensor([1.0, 0.0, 0.0, 1.0])
    loss = F.binary_cross_entropy(x, t, reduction="none")
    np.testing.assert_array_equal(loss.detach().numpy(), [100.0, 100.0, 0.0, 0.0])
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    # PyTorch's gradient bound: (x - t) / max(x (1 - x), 1e-12)
    np.testing.assert_allclose(x.grad.numpy(), [-1e12, 1e12, 0.0, 0.0], rtol=1e-6)


def test_binary_cross_entropy_rejects_inputs_outside_0_1_and_shape_mismatch():
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(mt.tensor([0.5, 1.5]), mt.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        F.binary_cross_entropy(mt.tensor([0.5, 0.5]), mt.tensor([0.0, 1.0, 1.0]))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 2 ** 16),
       weighted=st.booleans(), pos_weighted=st.booleans(), reduction=st.sampled_from(REDUCTIONS))
def test_binary_cross_entropy_with_logits(shape, seed, weighted, pos_weighted, reduction):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 3, size=shape)
    t = rng.uniform(0, 1, size=shape)
    w = rng.uniform(0.5, 2, size=shape) if weighted else None
    pw = rng.uniform(0.5, 3, size=shape[-1:]) if pos_weighted else None
    kwargs = dict(weight=None if w is None else f64(w), pos_weight=None if pw is None else f64(pw),
                  reduction=reduction)
    got = F.binary_cross_entropy_with_logits(f64(x), f64(t), **kwargs)
    expected = _apply_reduction(bce_logits_ref(x, t, 1.0 if w is None else w, 1.0 if pw is None else pw),
                                reduction)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, **kwargs), (f64(x, True), f64(t, True)))


def test_binary_cross_entropy_with_logits_is_stable_at_huge_logits_in_float32():
    x = mt.tensor([1000.0, -1000.0, 1000.0, -1000.0], requires_grad=True)
    t = mt.tensor([1.0, 0.0, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none", pos_weight=mt.tensor([2.0]))
    np.testing.assert_allclose(loss.detach().numpy(), [0.0, 0.0, 1000.0, 2000.0], atol=1e-6)
    loss.sum().backward()
    assert x.grad.dtype == mt.float32
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 1.0, -2.0], atol=1e-6)


def test_binary_cross_entropy_with_logits_rejects_shape_mismatch():
    with pytest.raises(ValueError, match=r"\(2, 1\).*\(2,\)"):
        F.binary_cross_entropy_with_logits(mt.randn(2), mt.rand(2, 1))


# ------------------------------------------------------------------------------------ regression
def _smooth_l1_ref(d, beta):
    return np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)


def _huber_ref(d, delta):
    return np.where(np.abs(d) <= delta, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta))


@pytest.mark.parametrize("fn, ref", [
    (F.mse_loss, lambda d: d * d), (F.l1_loss, np.abs), (F.smooth_l1_loss, lambda d: _smooth_l1_ref(d, 1.0)),
    (lambda a, b, reduction="mean": F.smooth_l1_loss(a, b, reduction=reduction, beta=0.6),
     lambda d: _smooth_l1_ref(d, 0.6)),
    (lambda a, b, reduction="mean": F.smooth_l1_loss(a, b, reduction=reduction, beta=0.0), np.abs),
    (F.huber_loss, lambda d: _huber_ref(d, 1.0)),
    (lambda a, b, reduction="mean": F.huber_loss(a, b, reduction=reduction, delta=0.4),
     lambda d: _huber_ref(d, 0.4))])
@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple), seed=st.integers(0, 2 ** 16),
       reduction=st.sampled_from(REDUCTIONS))
def test_regression_losses(fn, ref, shape, seed, reduction):
    rng = np.random.default_rng(seed)
    x, t = rng.normal(size=shape), rng.normal(size=shape)
    got = fn(f64(x), f64(t), reduction=reduction)
    np.testing.assert_allclose(got.numpy(), _apply_reduction(ref(x - t), reduction), rtol=1e-12)
    gradcheck(lambda a, b: fn(a, b, reduction=reduction), (f64(x, True), f64(t, True)))
    assert fn(mt.tensor(x, dtype=mt.float32), mt.tensor(t, dtype=mt.float32)).dtype == mt.float32


def test_regression_losses_broadcast_with_a_warning_as_pytorch():
    x = f64(np.arange(6.0).reshape(2, 3), True)
    t = f64([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="target size"):
        loss = F.mse_loss(x, t)
    np.testing.assert_allclose(loss.item(), np.mean((np.arange(6.0).reshape(2, 3) - [1, 2, 3]) ** 2))
    loss.backward()
    assert x.grad.shape == (2, 3)
    with pytest.raises(RuntimeError, match=r"\(4,\).*\(2, 3\)"), pytest.warns(UserWarning, match="target size"):
        F.l1_loss(x, f64(np.zeros(4)))  # PyTorch warns, then its broadcast fails
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(x, f64(np.zeros((2, 3))))


def test_l1_gradient_is_zero_where_input_equals_target():
    x = f64([1.0, 2.0, 3.0], True)
    F.l1_loss(x, f64([1.0, 0.0, 5.0]), reduction="sum").backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, -1.0])


def test_legacy_size_average_and_reduce_flags():
    x, t = f64([1.0, 3.0], True), f64([0.0, 0.0])
    assert F.mse_loss(x, t, size_average=False).item() == 10.0
    assert F.mse_loss(x, t, reduce=False).tolist() == [1.0, 9.0]
    assert F.mse_loss(x, t, size_average=True).item() == 5.0


def test_mse_loss_promotes_mixed_dtypes():
    out = F.mse_loss(mt.tensor([1.0, 2.0]), mt.tensor([0.0, 0.0], dtype=mt.float64))
    assert out.dtype == mt.float64


def test_smooth_l1_and_huber_options_and_errors():
    x, t = f64([0.0, 0.5, 1.5, -3.0], True), f64([0.0, 0.0, 0.0, 0.0])
    F.huber_loss(x, t, delta=1.5, reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 1.5, -1.5])  # clip(d, -delta, delta)
    w = f64([1.0, 2.0, 0.0, 0.5])
    np.testing.assert_allclose(F.huber_loss(x, t, weight=w, reduction="none").detach().numpy(),
                               _huber_ref(x.detach().numpy(), 1.0) * [1.0, 2.0, 0.0, 0.5])
    d = x.detach().numpy()
    assert F.huber_loss(x, t, weight=w).item() == pytest.approx(np.mean(_huber_ref(d, 1.0) * w.numpy()))
    assert F.smooth_l1_loss(x, t, size_average=False).item() == pytest.approx(_smooth_l1_ref(d, 1).sum())
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(x, t, beta=-1.0)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(x, t, delta=0.0)
    with pytest.raises(ValueError, match="reduction"):
        F.huber_loss(x, t, reduction="avg")


def test_smooth_l1_and_huber_modules():
    assert repr(mt.nn.SmoothL1Loss(beta=0.5)) == "SmoothL1Loss()" and repr(mt.nn.HuberLoss(delta=2.0)) == "HuberLoss()"
    x, t = f64([0.2, -2.0]), f64([0.0, 0.0])
    assert mt.nn.SmoothL1Loss(reduction="sum", beta=0.5)(x, t).item() == pytest.approx(0.04 + 1.75)
    assert mt.nn.HuberLoss(delta=2.0)(x, t).item() == pytest.approx((0.02 + 2.0) / 2)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert mt.nn.SmoothL1Loss(size_average=False).reduction == "sum"


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", [("smooth_l1_loss", {"beta": 0.7}), ("smooth_l1_loss", {"beta": 0.0}),
                                          ("huber_loss", {"delta": 0.8}), ("huber_loss", {"reduction": "none"})])
def test_smooth_l1_and_huber_match_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, t = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, name)(tx, torch.tensor(t), **kwargs)
    ty.sum().backward()
    mx = f64(x, True)
    my = getattr(F, name)(mx, f64(t), **kwargs)
    my.sum().backward()
    np.testing.assert_allclose(my.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_cross_entropy_ignored_row_of_masked_logits_with_label_smoothing_is_zero():
    """PyTorch masks the smoothing term of ignored rows (masked_fill), so a row of -inf logits there gives 0,
    not 0 * inf = NaN."""
    x = np.zeros((2, 4), np.float32)
    x[1, 1:] = -np.inf
    loss = mt.nn.functional.cross_entropy(mt.tensor(x), mt.tensor([0, 2]), ignore_index=2, label_smoothing=0.2,
                                          reduction="none")
    assert loss.tolist()[1] == 0 and np.isfinite(loss.tolist()[0])
