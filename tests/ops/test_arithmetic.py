"""Arithmetic with broadcasting: forward vs NumPy float64, gradients vs finite differences, scalars,
reflected and in-place forms, comparisons and logical ops."""
from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, FEW, assert_close, as_np, away_from, broadcast_pairs, check_grad, randn, seeds, t64

# name -> (operator, NumPy reference, how to make the second operand safe)
BINARY = {
    "add": (operator.add, np.add, lambda b: b),
    "sub": (operator.sub, np.subtract, lambda b: b),
    "mul": (operator.mul, np.multiply, lambda b: b),
    "div": (operator.truediv, np.divide, lambda b: away_from(b, (0.0,), 0.3)),
}


@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, name=st.sampled_from(sorted(BINARY)))
def test_binary_broadcasting_forward_and_grad(shapes, seed, name):
    op, ref, safe = BINARY[name]
    (sa, sb), _ = shapes
    a, b = randn(seed, sa), safe(randn(seed + 1, sb))
    assert_close(op(t64(a, False), t64(b, False)), ref(a, b), rtol=1e-12)
    check_grad(op, a, b)


@SETTINGS
@given(shape=broadcast_pairs, seed=seeds, name=st.sampled_from(sorted(BINARY)),
       scalar=st.sampled_from([2, -3, 0.5, 2.5]), reflected=st.booleans())
def test_binary_with_python_scalars(shape, seed, name, scalar, reflected):
    op, ref, safe = BINARY[name]
    (s, _), _ = shape
    x = safe(randn(seed, s)) if reflected else randn(seed, s)
    if reflected:
        fn, expected = (lambda t: op(scalar, t)), ref(scalar, x)
    else:
        fn, expected = (lambda t: op(t, scalar)), ref(x, scalar)
    out = fn(t64(x, False))
    assert out.dtype is mt.float64
    assert_close(out, expected, rtol=1e-12)
    check_grad(fn, x)
    # float32 stays float32 with a Python scalar on either side
    assert fn(mt.tensor(x, dtype=mt.float32)).dtype is mt.float32


@FEW
@given(shapes=broadcast_pairs, seed=seeds)
def test_pow_forward_and_grads(shapes, seed):
    (sa, sb), _ = shapes
    base = np.abs(randn(seed, sa)) + 0.5
    exponent = randn(seed + 1, sb)
    assert_close(t64(base, False) ** t64(exponent, False), base ** exponent, rtol=1e-12)
    check_grad(lambda a, b: a ** b, base, exponent)
    check_grad(lambda a: a ** 3, randn(seed, sa))
    check_grad(lambda a: a ** -1.5, base)
    check_grad(lambda b: 2.0 ** b, exponent)


def test_pow_special_points_match_pytorch():
    x = mt.tensor([0.0, 2.0], requires_grad=True)
    (x ** 0).sum().backward()
    assert_close(x.grad, [0.0, 0.0])  # b * a^(b-1) is taken as 0 where b = 0, not 0 * inf
    x.grad = None
    (x ** 2).sum().backward()
    assert_close(x.grad, [0.0, 4.0])
    e = mt.tensor([2.0, 0.5], requires_grad=True)
    (mt.zeros(2) ** e).sum().backward()
    assert_close(e.grad, [0.0, 0.0])  # a^b log a is taken as 0 where a = 0


def test_sqrt_via_pow_and_negative_base():
    assert_close(mt.tensor([4.0, 9.0]) ** 0.5, [2.0, 3.0])
    with np.errstate(invalid="ignore"):
        assert np.isnan((mt.tensor([-1.0]) ** 0.5).item())
    assert_close(mt.tensor([-2.0]) ** 3, [-8.0])


@pytest.mark.parametrize("a, b", [
    ([7.0, -7.0, 7.5, -7.5, 0.0], [2.0, 2.0, -2.0, -2.0, 3.0]),
    ([7, -7, 7, -7, 0], [2, 2, -2, -2, 3]),
])
def test_floor_divide_and_remainder_follow_python(a, b):
    ta, tb = mt.tensor(a), mt.tensor(b)
    assert_close(ta // tb, np.floor_divide(a, b))
    assert_close(ta % tb, np.remainder(a, b))  # the sign of the divisor, as Python and PyTorch
    assert_close(ta % 3, np.remainder(a, 3))
    assert (ta // tb).dtype is ta.dtype
    assert_close(mt.div(ta, tb, rounding_mode="floor"), np.floor_divide(a, b))
    assert_close(mt.div(ta, tb, rounding_mode="trunc"), np.trunc(np.divide(a, b)))
    with pytest.raises(RuntimeError, match="rounding_mode"):
        mt.div(ta, tb, rounding_mode="round")


def test_reflected_floor_divide_and_remainder():
    t = mt.tensor([2.0, 3.0])
    assert_close(7 // t, [3.0, 2.0])
    assert_close(7 % t, [1.0, 1.0])


def test_remainder_gradients():
    a = np.array([1.3, -2.7, 5.1])
    b = np.array([2.0, 1.9, -1.6])  # away from the jumps of floor(a / b)
    check_grad(lambda x, y: x % y, a, b)
    x = mt.tensor([7.5, -3.2], requires_grad=True)
    (x // 2.0).sum().backward()
    assert x.grad is None or np.all(x.grad.numpy() == 0)  # floor division is piecewise constant


@FEW
@given(shape=broadcast_pairs, seed=seeds)
def test_neg_and_alpha_forms(shape, seed):
    (s, s2), _ = shape
    x, y = randn(seed, s), randn(seed + 1, s2)
    assert_close(-t64(x, False), -x)
    assert_close(+t64(x, False), x)
    check_grad(lambda t: -t, x)
    assert_close(mt.add(t64(x, False), t64(y, False), alpha=2.5), x + 2.5 * y, rtol=1e-12)
    assert_close(mt.sub(t64(x, False), t64(y, False), alpha=-0.5), x + 0.5 * y, rtol=1e-12)
    check_grad(lambda a, b: mt.add(a, b, alpha=2.5), x, y)
    check_grad(lambda a, b: mt.sub(a, b, alpha=3), x, y)


def test_reflected_forms_with_scalars_and_ndarrays():
    t = mt.tensor([1.0, 2.0, 4.0])
    assert_close(2 - t, [1.0, 0.0, -2.0])
    assert_close(2 / t, [2.0, 1.0, 0.5])
    assert_close(2 ** t, [2.0, 4.0, 16.0])
    assert_close(3 * t, [3.0, 6.0, 12.0])
    assert_close(1 + t, [2.0, 3.0, 5.0])
    for out in (np.ones(3) + t, np.ones(3) * t, np.ones(3) - t):
        assert isinstance(out, mt.Tensor), "ndarray op Tensor must give a Tensor (NumPy defers to us)"
    assert_close(np.full(3, 2.0) - t, [1.0, 0.0, -2.0])
    assert_close(np.full(3, 8.0) / t, [8.0, 4.0, 2.0])
    assert_close(np.eye(3) @ t, [1.0, 2.0, 4.0])
    assert_close(t + np.ones(3), [2.0, 3.0, 5.0])


def test_reflected_gradients():
    x = np.array([0.7, 1.5, 2.0])
    for fn in (lambda t: 2 - t, lambda t: 2 / t, lambda t: 2 ** t, lambda t: 3.5 * t, lambda t: 1 + t):
        check_grad(fn, x)


def test_broadcast_mismatch_raises_pytorchs_error():
    # PyTorch 2.13's text, for every op whose operands do not broadcast (NumPy's ValueError, turned in apply)
    message = r"^The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1$"
    for op in (operator.add, operator.mul, operator.sub, operator.truediv, operator.pow, operator.lt,
               operator.and_, mt.maximum, mt.atan2, mt.hypot, mt.isclose):
        a, b = (mt.ones(2, 3), mt.ones(4)) if op is not operator.and_ else (mt.ones(2, 3).bool(), mt.ones(4).bool())
        with pytest.raises(RuntimeError, match=message):
            op(a, b)


def test_broadcast_gradient_reduces_to_each_shape():
    a = mt.ones(3, 1, requires_grad=True)
    b = mt.ones(1, 4, requires_grad=True)
    c = mt.ones(4, requires_grad=True)
    (a * b + c).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (1, 4) and c.grad.shape == (4,)
    assert_close(a.grad, np.full((3, 1), 4.0))
    assert_close(b.grad, np.full((1, 4), 3.0))
    assert_close(c.grad, np.full(4, 3.0))


def test_gradient_dtype_follows_each_input():
    a = mt.ones(2, dtype=mt.float32, requires_grad=True)
    b = mt.ones(2, dtype=mt.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is mt.float32 and b.grad.dtype is mt.float64


# ------------------------------------------------------------------------------- comparisons, logic
@pytest.mark.parametrize("op, ref", [
    (operator.eq, np.equal), (operator.ne, np.not_equal), (operator.lt, np.less),
    (operator.le, np.less_equal), (operator.gt, np.greater), (operator.ge, np.greater_equal)])
def test_comparisons(op, ref):
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[2.0], [2.0]])
    x = mt.tensor(a, requires_grad=True)
    out = op(x, mt.tensor(b))
    assert out.dtype is mt.bool and not out.requires_grad and out.grad_fn is None
    np.testing.assert_array_equal(out.numpy(), ref(a, b))
    np.testing.assert_array_equal(op(x, 2).numpy(), ref(a, 2))
    np.testing.assert_array_equal(op(2, x).numpy(), ref(2, a))


def test_comparison_methods():
    x = mt.tensor([1, 2, 3])
    assert x.eq(2).tolist() == [False, True, False] and x.ne(2).tolist() == [True, False, True]
    assert x.lt(2).tolist() == [True, False, False] and x.le(2).tolist() == [True, True, False]
    assert x.gt(2).tolist() == [False, False, True] and x.ge(2).tolist() == [False, True, True]


def test_logical_and_bitwise():
    p, q = mt.tensor([True, True, False, False]), mt.tensor([True, False, True, False])
    assert (p & q).tolist() == [True, False, False, False]
    assert (p | q).tolist() == [True, True, True, False]
    assert (p ^ q).tolist() == [False, True, True, False]
    assert (~p).tolist() == [False, False, True, True]
    assert mt.logical_and(p, q).tolist() == [True, False, False, False]
    assert mt.logical_or(mt.tensor([0.0, 2.0]), mt.tensor([0.0, 0.0])).tolist() == [False, True]
    assert mt.logical_xor(p, q).tolist() == [False, True, True, False]
    assert mt.logical_not(mt.tensor([0, 3])).tolist() == [True, False]
    assert (~mt.tensor([0, 5])).tolist() == [-1, -6]
    assert mt.bitwise_and(mt.tensor([6]), mt.tensor([3])).tolist() == [2]


def test_isnan_isinf_isfinite():
    x = mt.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert x.isnan().tolist() == [False, True, False, False]
    assert x.isinf().tolist() == [False, False, True, True]
    assert x.isfinite().tolist() == [True, False, False, False]


# -------------------------------------------------------------------------------------- in place
class TestInPlace:
    @pytest.mark.parametrize("apply, ref", [
        (lambda t: t.__iadd__(mt.tensor([1.0, 2.0, 3.0])), lambda a: a + [1, 2, 3]),
        (lambda t: t.__isub__(2), lambda a: a - 2),
        (lambda t: t.__imul__(mt.tensor(3.0)), lambda a: a * 3),
        (lambda t: t.__itruediv__(4), lambda a: a / 4),
        (lambda t: t.add_(mt.ones(3), alpha=-2), lambda a: a - 2),
        (lambda t: t.sub_(mt.ones(3), alpha=0.5), lambda a: a - 0.5),
        (lambda t: t.mul_(2), lambda a: a * 2),
        (lambda t: t.div_(2), lambda a: a / 2),
        (lambda t: t.pow_(2), lambda a: a ** 2),
        (lambda t: t.clamp_(-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
        (lambda t: t.zero_(), lambda a: a * 0),
        (lambda t: t.fill_(1.5), lambda a: np.full_like(a, 1.5)),
        (lambda t: t.copy_(mt.tensor([7.0, 8.0, 9.0])), lambda a: np.array([[7.0, 8.0, 9.0]] * 2)),
        (lambda t: t.copy_(np.arange(3)), lambda a: np.array([[0.0, 1.0, 2.0]] * 2)),
        (lambda t: t.masked_fill_(mt.tensor([True, False, True]), -1.0),
         lambda a: np.where([True, False, True], -1.0, a)),
    ])
    def test_results_visible_through_views(self, apply, ref):
        base = mt.tensor(np.arange(6.0).reshape(2, 3) - 2.5, dtype=mt.float32)
        expected = ref(base.numpy().astype(np.float64))
        view = base[:, :]
        before = id(base.numpy())
        out = apply(base)
        assert out is base and id(base.numpy()) == before, "in-place ops keep the same tensor and memory"
        assert base.dtype is mt.float32
        assert_close(base, expected)
        assert_close(view, expected)

    def test_writing_into_a_view_changes_the_base(self):
        base = mt.zeros(2, 4)
        base[0].fill_(2.0)
        base[:, 1].zero_()
        base[1, ::2].add_(5.0)
        base.T[3].mul_(3.0)  # T is a view too
        assert base.tolist() == [[2.0, 0.0, 2.0, 6.0], [5.0, 0.0, 5.0, 0.0]]

    def test_copy_broadcasts_and_casts(self):
        i = mt.zeros(2, 3, dtype=mt.int64)
        i.copy_(mt.tensor([1.7, 2.2, -1.5]))
        assert i.dtype is mt.int64 and i.tolist() == [[1, 2, -1]] * 2
        f = mt.zeros(2)
        f.copy_(mt.tensor(3.0, dtype=mt.float64))
        assert f.dtype is mt.float32 and f.tolist() == [3.0, 3.0]
        with pytest.raises(RuntimeError):
            mt.zeros(2).add_(mt.ones(3))

    @pytest.mark.parametrize("apply", [
        lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.zero_(), lambda t: t.fill_(1.0),
        lambda t: t.copy_(mt.ones(2)), lambda t: t.__iadd__(1), lambda t: t.__imul__(2),
        lambda t: t.__setitem__(0, 5.0)])
    def test_a_leaf_requiring_grad_is_refused_under_grad_mode(self, apply):
        w = mt.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            apply(w)
        assert w.tolist() == [1.0, 1.0]
        with mt.no_grad():
            apply(w)  # optimizer style: allowed, no graph
        assert w.is_leaf and w.requires_grad and w.grad_fn is None

    def test_optimizer_style_update(self):
        w = mt.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with mt.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
        assert_close(w, [0.8, 1.6], rtol=1e-6)
        assert w.is_leaf and w.requires_grad and w.grad.tolist() == [0.0, 0.0]

    def test_in_place_on_a_non_leaf_records_the_graph(self):
        x = mt.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y += 1
        y.mul_(x)  # y = (2x + 1) x
        assert y.grad_fn is not None and "Mul" in y.grad_fn.name()
        y.sum().backward()
        assert_close(x.grad, 4 * np.array([1.0, 2.0]) + 1)

    @pytest.mark.parametrize("apply, dydx", [
        (lambda y: y.mul_(y), lambda x: 2 * x),       # the op saves y, then y is overwritten
        (lambda y: y.pow_(2), lambda x: 2 * x),
        (lambda y: y.div_(y + 1), lambda x: 1 / (x + 1) ** 2),
        (lambda y: y.clamp_(1.5, 10), lambda x: (x >= 1.5).astype(float)),
    ])
    def test_in_place_ops_that_save_their_input(self, apply, dydx):
        a = np.array([1.0, 2.0, 3.0])
        x = t64(a)
        y = x * 1
        apply(y)
        y.sum().backward()
        assert_close(x.grad, dydx(a), rtol=1e-10)

    def test_in_place_into_a_constant_with_a_differentiable_operand(self):
        w = mt.tensor([3.0, 4.0], requires_grad=True)
        t = mt.tensor([1.0, 2.0])
        t.mul_(w)
        assert t.requires_grad and t.grad_fn is not None
        t.sum().backward()
        assert_close(w.grad, [1.0, 2.0])

    def test_copy_into_a_constant_from_a_differentiable_tensor(self):
        w = mt.tensor([3.0, 4.0], requires_grad=True)
        t = mt.zeros(2, 2)
        t.copy_(w * 2)
        (t * mt.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        assert_close(w.grad, [8.0, 12.0])

    @pytest.mark.parametrize("overwrite, dydx", [
        (lambda y: y.zero_(), 0.0), (lambda y: y.fill_(3.0), 0.0), (lambda y: y.copy_(mt.ones(2)), 0.0),
        (lambda y: y.copy_(mt.tensor(7.0, dtype=mt.float64)), 0.0), (lambda y: y.add_(1.0), 2.0)])
    def test_overwriting_a_non_leaf_cuts_its_old_graph(self, overwrite, dydx):
        x = t64([1.0, 2.0])
        y = x * 2
        overwrite(y)
        assert y.requires_grad and y.grad_fn is not None  # still in the graph, as PyTorch
        (y + x).sum().backward()
        assert_close(x.grad, [1.0 + dydx, 1.0 + dydx])

    def test_in_place_under_no_grad_records_nothing(self):
        x = mt.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        with mt.no_grad():
            y.add_(1)
        assert y.grad_fn is not None and "Mul" in y.grad_fn.name()  # y's own node is unchanged
        assert_close(y, [3.0, 5.0])


def test_grads_of_mixed_float_arithmetic_expression():
    a, b, c = randn(0, (3, 4)), randn(1, (4,)), np.abs(randn(2, (3, 1))) + 0.5
    check_grad(lambda x, y, z: (x * y - z) / z + x ** 2 * 0.5 - 1 / (z + 1), a, b, c)
    out = as_np((lambda x, y, z: (x * y - z) / z + x ** 2 * 0.5 - 1 / (z + 1))(
        t64(a, False), t64(b, False), t64(c, False)))
    np.testing.assert_allclose(out, (a * b - c) / c + a ** 2 * 0.5 - 1 / (c + 1), rtol=1e-12)


@pytest.mark.parametrize("modify", [
    lambda y: y.add_(1.0), lambda y: y.__imul__(2.0), lambda y: y.clamp_(max=1.5),
    lambda y: y.__setitem__(0, 0.25), lambda y: y.__setitem__(mt.tensor([True, False, True]), 3.0),
    lambda y: y[1:].mul_(2.0), lambda y: y.detach().zero_()])
def test_in_place_after_an_op_that_saved_its_output_raises(modify):
    """exp saves its output y: writing into y (or a view of it, or its detach()) bumps y's version, and
    exp's backward raises PyTorch's error instead of reading the new values."""
    x = mt.tensor([0.1, 0.4, 0.7], requires_grad=True)
    y = x.exp()
    modify(y)
    assert y._version == 1
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[minitensor.FloatTensor \[3\]\], "
                       r"which is output 0 of ExpBackward0, is at version 1; expected version 0 instead"):
        (y * y).sum().backward()


@pytest.mark.parametrize("modify", [lambda y: y.__setitem__((slice(None), 0), 0.5), lambda y: y.mul_(3.0)])
def test_in_place_after_softmax_raises(modify):
    y = mt.nn.functional.softmax(mt.ones(2, 3, requires_grad=True), dim=1)
    modify(y)
    with pytest.raises(RuntimeError, match="SoftmaxBackward0, is at version 1; expected version 0"):
        y.sum().backward()


@pytest.mark.parametrize("modify", [lambda y: y.add_(1.0), lambda y: y.__imul__(2.0), lambda y: y.clamp_(max=1.5),
                                    lambda y: y.__setitem__(0, 0.25)])
def test_in_place_where_nothing_saved_the_values_differentiates(modify):
    """y = x * 2 saves nothing of y: writing into it is fine, as in PyTorch."""
    def fn(x):
        y = x * 2.0
        modify(y)
        return y * y

    check_grad(fn, np.array([0.1, 0.4, 0.7]))


def test_in_place_op_keeps_its_own_saved_input():
    """y.mul_(y) and y.pow_(2) save y, then write y: they keep a copy (PyTorch's original_self)."""
    for modify, ref in ((lambda y: y.pow_(2.0), lambda a: 8 * a), (lambda y: y.mul_(y), lambda a: 8 * a)):
        a = np.array([0.1, -0.4, 0.7])
        x = mt.tensor(a, requires_grad=True)
        y = x * 2.0
        modify(y)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), ref(a), rtol=1e-12)


def test_writes_through_data_are_not_versioned():
    """``.data`` shares memory but has its own version counter (PyTorch's way around the check)."""
    x = mt.tensor([0.1, 0.4], requires_grad=True)
    y = x.exp()
    y.data.mul_(2.0)
    assert y._version == 0
    y.sum().backward()  # reads the doubled values, as PyTorch's would
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.1, 0.4]), rtol=1e-6)
