"""Corner cases where minitensor used to return silently wrong numbers, refuse valid input or leak a raw
NumPy error (issue #13, part B): each against PyTorch's documented answer, forward and backward, with a
float64 gradcheck where a gradient is involved."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F

from hypothesis.extra import numpy as hnp

from helpers import SETTINGS, check_grad, randn, seeds, shapes, t64

NAN = float("nan")


# ------------------------------------------------------------------------- losses: every target ignored
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_all_ignored_gives_zero_gradient(smoothing, weighted):
    """PyTorch: the 'mean' loss is 0/0 = nan, the gradient is zero (not nan), 'sum' is 0."""
    x = mt.tensor(randn(0, (3, 4)), requires_grad=True)
    target = mt.tensor([-100, -100, -100])
    weight = mt.tensor([1.0, 2.0, 0.5, 1.0]) if weighted else None
    loss = F.cross_entropy(x, target, weight=weight, label_smoothing=smoothing)
    assert np.isnan(loss.item())
    loss.backward()
    assert x.grad.tolist() == [[0.0] * 4] * 3
    for reduction, expected in (("sum", 0.0), ("none", [0.0] * 3)):
        assert F.cross_entropy(x, target, weight=weight, reduction=reduction,
                               label_smoothing=smoothing).tolist() == expected


def test_nll_loss_all_ignored_gives_zero_gradient_and_training_stays_finite():
    x = mt.tensor(randn(1, (2, 3, 5)), requires_grad=True)  # (N, C, d): targets (N, d)
    target = mt.full((2, 5), 1, dtype=mt.int64)
    loss = F.nll_loss(x, target, ignore_index=1)
    assert np.isnan(loss.item())
    loss.backward()
    assert not x.grad.numpy().any()
    model = mt.nn.Linear(4, 3)
    opt = mt.optim.SGD(model.parameters(), lr=0.5)
    F.cross_entropy(model(mt.randn(6, 4)), mt.full((6,), -100, dtype=mt.int64)).backward()
    opt.step()
    assert all(np.isfinite(p.detach().numpy()).all() for p in model.parameters())


def test_cross_entropy_partly_ignored_still_matches_finite_differences():
    target = mt.tensor([2, -100, 0, -100])
    check_grad(lambda x: F.cross_entropy(x, target, label_smoothing=0.1), randn(2, (4, 3)))


# -------------------------------------------------------------------------------- max / min with nan
@pytest.mark.parametrize("op", ["max", "min"])
def test_full_max_min_send_the_gradient_to_the_nan(op):
    """PyTorch's evenly_distribute_backward: a nan result is shared among the nan positions."""
    x = mt.tensor([1.0, NAN, 3.0, -2.0], requires_grad=True)
    y = getattr(x, op)()
    assert np.isnan(y.item())
    (y * 4).backward()
    assert x.grad.tolist() == [0.0, 4.0, 0.0, 0.0]
    x = mt.tensor([[NAN, 1.0], [2.0, NAN]], requires_grad=True)
    getattr(x, op)().backward()
    assert x.grad.tolist() == [[0.5, 0.0], [0.0, 0.5]]


@SETTINGS
@given(shape=shapes, seed=seeds, op=st.sampled_from(["max", "min"]), nan_rate=st.sampled_from([0.0, 0.3]))
def test_full_max_min_gradient_against_the_reference_rule(shape, seed, op, nan_rate):
    """Reference (PyTorch's evenly_distribute_backward): the gradient is shared evenly among the elements
    equal to the result, or among the nans when the result is nan."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-2, 3, size=shape).astype(np.float64)  # small integers: ties are common
    a[rng.random(shape) < nan_rate] = np.nan
    x = mt.tensor(a, requires_grad=True)
    y = getattr(x, op)()
    ref = getattr(np, op)(a)
    assert (np.isnan(ref) and np.isnan(y.item())) or y.item() == ref
    y.backward()
    mask = np.isnan(a) if np.isnan(ref) else a == ref
    np.testing.assert_array_equal(x.grad.numpy(), mask / mask.sum())


def test_full_max_ties_share_and_match_finite_differences():
    x = mt.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]
    check_grad(lambda t: t.max() * t.min(), np.array([[0.3, -1.2], [2.5, 0.7]]))


def test_amax_with_nan_follows_pytorchs_scale_grad_by_count():
    """amax(dim): mask = (x == result) is empty on a nan row, so (g / 0) * 0 = nan there, as PyTorch;
    other rows share between ties."""
    x = mt.tensor([[1.0, NAN, 3.0], [1.0, 5.0, 5.0]], requires_grad=True)
    y = x.amax(1)
    assert np.isnan(y[0].item()) and y[1].item() == 5.0
    y.sum().backward()
    g = x.grad.numpy()
    assert np.isnan(g[0]).all() and g[1].tolist() == [0.0, 0.5, 0.5]


@pytest.mark.parametrize("p", [float("inf"), float("-inf")])
def test_inf_norm_with_nan_sends_the_gradient_to_the_nan(p):
    """PyTorch's linalg_vector_norm_backward: mask = (|x| == norm) | isnan(|x|), times sgn(x), which is 0 at
    NaN (PyTorch 2.13: the whole gradient of the NaN row is 0)."""
    x = mt.tensor([[1.0, NAN, -3.0], [2.0, -2.0, 1.0]], requires_grad=True)
    y = x.norm(p, dim=1)
    assert np.isnan(y[0].item()) and y[1].item() == (2.0 if p > 0 else 1.0)
    y.sum().backward()
    g = x.grad.numpy()
    assert g[0].tolist() == [0.0, 0.0, 0.0]
    assert g[1].tolist() == ([0.5, -0.5, 0.0] if p > 0 else [0.0, 0.0, 1.0])


def test_max_along_dim_with_nan_returns_and_differentiates_its_index():
    x = mt.tensor([[1.0, NAN, 3.0, NAN], [4.0, 5.0, 5.0, 0.0]], requires_grad=True)
    values, indices = x.max(1)
    assert indices.tolist() == [1, 1] and np.isnan(values[0].item())
    values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]


# ------------------------------------------------------------------------ integer division by zero
@pytest.mark.parametrize("op", [
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: mt.floor_divide(a, b),
    lambda a, b: mt.div(a, b, rounding_mode="trunc"), lambda a, b: mt.div(a, b, rounding_mode="floor")])
def test_integer_division_by_zero_raises(op):
    a = mt.tensor([7, -3, 4])
    for b in (mt.tensor([2, 0, 1]), 0, mt.tensor(0, dtype=mt.int32)):
        with pytest.raises(ZeroDivisionError):
            op(a, b)
    with pytest.raises(ZeroDivisionError):
        op(5, mt.tensor([1, 0]))


def test_float_division_by_zero_still_gives_inf_and_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert (mt.tensor([1.0, -2.0]) // 0).tolist() == [float("inf"), float("-inf")]
        assert np.isnan((mt.tensor([1.0]) % 0).item())


@SETTINGS
@given(a=st.lists(st.integers(-50, 50), min_size=1, max_size=6),
       b=st.lists(st.integers(1, 9).flatmap(lambda v: st.sampled_from([v, -v])), min_size=1, max_size=6))
def test_integer_floor_division_and_remainder_match_python(a, b):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    ta, tb = mt.tensor(a), mt.tensor(b)
    assert (ta // tb).tolist() == [x // y for x, y in zip(a, b)]
    assert (ta % tb).tolist() == [x % y for x, y in zip(a, b)]


# --------------------------------------------------------------------------------- gradients at zero
def test_pow_gradients_at_zero_follow_pytorchs_formulas():
    """d/db a**b = a**b log(a), 0 where a == 0 and b >= 0 (so 0**b with b < 0 gives inf * -inf = -inf);
    d/da = b a**(b-1), 0 where b == 0."""
    b = mt.tensor([2.0, 0.5, 0.0, -1.0, -0.5], dtype=mt.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        (0 ** b).sum().backward()
    assert b.grad.tolist() == [0.0, 0.0, 0.0, float("-inf"), float("-inf")]
    a = mt.zeros(5, dtype=mt.float64, requires_grad=True)
    b = mt.tensor([2.0, 0.5, 0.0, -1.0, -2.0], dtype=mt.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        (a ** b).sum().backward()
    assert b.grad.tolist() == [0.0, 0.0, 0.0, float("-inf"), float("-inf")]
    assert a.grad.tolist() == [0.0, float("inf"), 0.0, float("-inf"), float("-inf")]


def test_pow_gradients_away_from_zero_match_finite_differences():
    check_grad(lambda a, b: a ** b, np.array([0.5, 1.5, 2.0]), np.array([-1.5, 0.5, 2.0]))
    check_grad(lambda b: 3.0 ** b, np.array([-1.0, 0.0, 2.0]))


def test_integer_to_a_negative_power_raises_pytorchs_runtime_error():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        mt.tensor([2, 3]) ** -1
    assert (mt.tensor([2, 3]) ** 2).tolist() == [4, 9]


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round"])
def test_piecewise_constant_ops_give_a_zero_gradient(name):
    x = t64([-1.5, 0.0, 0.3, 2.5])
    y = getattr(mt, name)(x)
    assert y.requires_grad
    (y * x).sum().backward()  # d/dx (f(x) x) = f(x): f contributes zero
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_abs_and_sqrt_at_zero():
    x = mt.zeros(2, requires_grad=True)
    x.abs().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    x = mt.zeros(1, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x.sqrt().sum().backward()
    assert x.grad.tolist() == [float("inf")]


# ------------------------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("eps", [0.0, -1e-5])
def test_batch_norm_refuses_eps_that_is_not_positive(eps):
    with pytest.raises(RuntimeError, match="eps must be positive"):
        mt.nn.BatchNorm1d(3, eps=eps)(mt.ones(4, 3))
    with pytest.raises(RuntimeError, match="eps must be positive"):
        F.batch_norm(mt.ones(4, 3), mt.zeros(3), mt.ones(3), eps=eps)


@pytest.mark.parametrize("target", [[2.0, 0.0], [-0.5, 1.0], [NAN, 1.0]])
def test_binary_cross_entropy_refuses_targets_outside_0_1(target):
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(mt.tensor([0.5, 0.5]), mt.tensor(target))


def test_binary_cross_entropy_refuses_nan_input():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(mt.tensor([NAN, 0.5]), mt.tensor([0.0, 1.0]))


@pytest.mark.parametrize("fn", [mt.sum, mt.mean, mt.amax, mt.argmax, mt.prod, mt.logsumexp, mt.max, mt.norm])
def test_reductions_of_a_python_number_raise_type_error(fn):
    with pytest.raises(TypeError, match="argument 'input' \\(position 1\\) must be Tensor, not float"):
        fn(1.0) if fn is not mt.logsumexp else fn(1.0, 0)


@pytest.mark.parametrize("name", ["argmax", "argmin", "max", "min", "amax", "amin"])
def test_reductions_without_identity_refuse_empty_inputs_like_pytorch(name):
    with pytest.raises(RuntimeError, match=f"{name}\\(\\): Expected reduction dim to be specified"):
        getattr(mt.zeros(0), name)()
    with pytest.raises(IndexError, match=f"{name}\\(\\): Expected reduction dim 0 to have non-zero size"):
        getattr(mt.zeros(0, 3), name)(0)
    out = getattr(mt.zeros(0, 3), name)(1)  # the reduced dim is not empty: an empty result
    out = out[0] if isinstance(out, tuple) else out
    assert out.shape == (0,)


# ---------------------------------------------------------------------------- empty and 0-d inputs
def test_amax_over_a_non_empty_dim_of_an_empty_tensor():
    x = mt.zeros(0, 3, requires_grad=True)
    y = x.amax(1)
    assert y.shape == (0,)
    y.sum().backward()
    assert x.grad.shape == (0, 3)


@pytest.mark.parametrize("shape, dim", [((2, 0), 1), ((0, 3), 1), ((0, 3), 0), ((2, 0, 3), -1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_empty_inputs_is_empty(shape, dim, name):
    x = mt.zeros(*shape, requires_grad=True)
    y = getattr(F, name)(x, dim=dim)
    assert y.shape == shape
    y.sum().backward()
    assert x.grad.shape == shape


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), seed=seeds, data=st.data())
def test_softmax_and_logsumexp_over_shapes_with_empty_dims(shape, seed, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = randn(seed, shape)
    x = mt.tensor(a, requires_grad=True)
    with np.errstate(divide="ignore"):
        lse = np.log(np.exp(a).sum(axis=dim))
    np.testing.assert_allclose(x.logsumexp(dim).detach().numpy(), lse, rtol=1e-12)
    e = np.exp(a - (a.max(axis=dim, keepdims=True) if a.size else 0))
    y = F.softmax(x, dim=dim)
    np.testing.assert_allclose(y.detach().numpy(), e / e.sum(axis=dim, keepdims=True), rtol=1e-12)
    (y * y).sum().backward()
    assert x.grad.shape == shape


def test_logsumexp_over_an_empty_dim_is_minus_inf():
    x = mt.zeros(2, 0, requires_grad=True)
    y = x.logsumexp(1)
    assert y.tolist() == [float("-inf")] * 2
    y.sum().backward()
    assert x.grad.shape == (2, 0)
    assert mt.zeros(0, 3).logsumexp(1).shape == (0,)
    assert mt.zeros(2, 0).logsumexp(1, keepdim=True).shape == (2, 1)


def test_softmax_of_a_0d_tensor():
    x = mt.tensor(2.0, dtype=mt.float64, requires_grad=True)
    y = F.softmax(x, dim=0)
    assert y.shape == () and y.item() == 1.0
    y.backward()
    assert x.grad.item() == 0.0
    assert F.log_softmax(mt.tensor(2.0), dim=-1).item() == 0.0


def test_layer_norm_of_an_empty_batch():
    ln = mt.nn.LayerNorm(3)
    x = mt.zeros(0, 3, requires_grad=True)
    y = ln(x)
    assert y.shape == (0, 3)
    y.sum().backward()
    assert x.grad.shape == (0, 3) and ln.weight.grad.tolist() == [0.0] * 3 and ln.bias.grad.tolist() == [0.0] * 3


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_of_an_empty_batch(training):
    """PyTorch returns an empty output still joined to weight and bias, and leaves the running statistics."""
    bn = mt.nn.BatchNorm2d(3).train(training)
    bn.running_mean.fill_(0.5)
    x = mt.zeros(0, 3, 2, 2, requires_grad=True)
    y = bn(x)
    assert y.shape == (0, 3, 2, 2)
    y.sum().backward()
    assert x.grad.shape == (0, 3, 2, 2) and bn.weight.grad.tolist() == [0.0] * 3
    assert bn.running_mean.tolist() == [0.5] * 3 and bn.running_var.tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        mt.nn.BatchNorm1d(3)(mt.ones(1, 3))


@given(seed=seeds)
@SETTINGS
def test_batch_norm_still_matches_its_reference(seed):
    x = randn(seed, (4, 3))
    y = F.batch_norm(mt.tensor(x), None, None, training=True).numpy()
    ref = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------ piecewise activations: NaN gradients where flat
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.float16, mt.bfloat16])
@pytest.mark.parametrize("name, x, passes", [
    ("relu", [-1.0, 0.0, 2.0], [False, False, True]),
    ("relu6", [-1.0, 3.0, 7.0], [False, True, False]),
    ("hardtanh", [-2.0, 0.0, 2.0], [False, True, False]),
    ("hardsigmoid", [-4.0, 0.0, 4.0], [False, True, False]),
])
def test_flat_pieces_of_activations_stop_a_nan_gradient(name, x, passes, dtype):
    """PyTorch's threshold_backward / hardtanh_backward / hardsigmoid_backward choose 0 where the function is
    flat, so a NaN (or inf) upstream gradient gives 0 there, not NaN * 0 = NaN (values from PyTorch 2.13)."""
    t = mt.tensor(x, dtype=dtype, requires_grad=True)
    getattr(F, name)(t).backward(mt.tensor([NAN, NAN, NAN], dtype=dtype))
    got = t.grad.float().numpy()
    assert np.array_equal(np.isnan(got), np.array(passes)) and np.all(got[~np.array(passes)] == 0)
    t.grad = None
    getattr(F, name)(t).backward(mt.tensor([np.inf, np.inf, np.inf], dtype=dtype))
    got = t.grad.float().numpy()
    assert np.all(got[~np.array(passes)] == 0) and np.all(np.isinf(got[np.array(passes)]))


@pytest.mark.parametrize("op, error, message", [
    (lambda x: x.abs(), NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    (mt.absolute, NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    (lambda x: x.argmax(), RuntimeError, r"argmax\(\): does not support bool input"),
    (lambda x: mt.argmin(x, 1, keepdim=True), RuntimeError, r"argmin\(\): does not support bool input")])
def test_bool_inputs_refused_as_pytorch(op, error, message):
    # PyTorch has no bool kernel for these (sgn, max and min take bool, and still do here)
    x = mt.tensor([[True, False, True]])
    with pytest.raises(error, match=message):
        op(x)
    assert mt.sgn(x).tolist() == [[True, False, True]] and mt.max(x, 1).indices.tolist() == [0]
