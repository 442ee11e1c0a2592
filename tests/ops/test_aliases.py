"""PyTorch's other names for existing ops (absolute, divide, greater...), the in-place forms added as Tensor
methods (divide_, eq_...), the top-level functions that are a Tensor method (minitensor.exp_(x)...), the
tensor queries (is_signed, is_nonzero, get_device, retains_grad...) and the activations exported at the top
level: each gives what its canonical op gives, values and gradients. PyTorch side by side:
test_aliases_torch.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

NAN, INF = math.nan, math.inf
X = [[1.5, -2.0, 0.25], [3.0, -0.5, 4.0]]
Y = [[0.5, 2.0, -1.0], [3.0, 0.5, 2.5]]

# (alias, canonical op, extra arguments after the tensor(s), how many tensors)
ALIASES = [
    ("absolute", "abs", (), 1), ("negative", "neg", (), 1), ("sgn", "sign", (), 1),
    ("divide", "div", (), 2), ("multiply", "mul", (), 2), ("subtract", "sub", (), 2), ("true_divide", "div", (), 2),
    ("greater", "gt", (), 2), ("greater_equal", "ge", (), 2), ("less", "lt", (), 2), ("less_equal", "le", (), 2),
    ("not_equal", "ne", (), 2),
]


def run(fn, n, *extra, **kwargs):
    """fn on fresh float64 leaves (X, Y), and the leaves' gradients of its sum where it is differentiable."""
    xs = [mt.tensor(v, dtype=mt.float64, requires_grad=True) for v in (X, Y)[:n]]
    out = fn(*xs, *extra, **kwargs)
    if out.requires_grad:
        out.sum().backward()
    return out.tolist(), [None if x.grad is None else x.grad.tolist() for x in xs]


@pytest.mark.parametrize("alias, canonical, extra, n", ALIASES)
def test_alias_is_its_op(alias, canonical, extra, n):
    assert getattr(mt, alias) is getattr(mt, canonical)
    assert run(getattr(mt, alias), n, *extra) == run(getattr(mt, canonical), n, *extra)
    method = lambda x, *rest: getattr(x, alias)(*rest)  # noqa: E731
    assert run(method, n, *extra) == run(getattr(mt, canonical), n, *extra)


@pytest.mark.parametrize("kwargs", [{}, {"alpha": 2}, {"rounding_mode": "floor"}, {"rounding_mode": "trunc"}])
def test_keywords_pass_through(kwargs):
    alias, canonical = ("subtract", "sub") if "alpha" in kwargs else ("divide", "div")
    assert run(getattr(mt, alias), 2, **kwargs)[0] == run(getattr(mt, canonical), 2, **kwargs)[0]


# (in-place method, out-of-place op, arguments, self's dtype)
IN_PLACE = [
    ("absolute_", mt.abs, (), mt.float32), ("negative_", mt.neg, (), mt.float32), ("sgn_", mt.sign, (), mt.float32),
    ("divide_", mt.div, (Y,), mt.float32), ("multiply_", mt.mul, (Y,), mt.float32),
    ("subtract_", lambda a, b: mt.sub(a, b, alpha=3), (Y,), mt.float32),
    ("true_divide_", mt.div, (Y,), mt.float32), ("floor_divide_", mt.floor_divide, (Y,), mt.float32),
    ("clip_", lambda a: mt.clamp(a, -1, 2), (), mt.float32),
    ("deg2rad_", mt.deg2rad, (), mt.float32), ("rad2deg_", mt.rad2deg, (), mt.float32),
    ("ldexp_", mt.ldexp, ([[1, 2, 3], [0, -1, 2]],), mt.float32),
]


@pytest.mark.parametrize("name, op, args, dtype", IN_PLACE)
def test_in_place_methods(name, op, args, dtype):
    x = mt.tensor(X, dtype=dtype)
    others = [mt.tensor(a) for a in args]
    expected = op(x, *others).tolist()
    view, version = x[0], x._version
    kwargs = {"alpha": 3} if name == "subtract_" else {"min": -1, "max": 2} if name == "clip_" else {}
    assert getattr(x, name)(*others, **kwargs) is x
    assert x.tolist() == expected and view.tolist() == expected[0] and x._version == version + 1


def test_divide_in_place_rounding_mode_and_integer_errors():
    x = mt.tensor([7, -7])
    assert x.divide_(2, rounding_mode="floor").tolist() == [3, -4]
    with pytest.raises(RuntimeError, match="can't be cast"):
        mt.tensor([7, -7]).divide_(2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        mt.tensor([180]).deg2rad_()


@pytest.mark.parametrize("name, op", [("eq_", mt.eq), ("ne_", mt.ne), ("lt_", mt.lt), ("le_", mt.le),
                                      ("gt_", mt.gt), ("ge_", mt.ge), ("greater_", mt.gt),
                                      ("greater_equal_", mt.ge), ("less_", mt.lt), ("less_equal_", mt.le),
                                      ("not_equal_", mt.ne)])
@pytest.mark.parametrize("dtype", [mt.float32, mt.int64, mt.bool])
def test_in_place_comparisons_write_one_and_zero_in_self_dtype(name, op, dtype):
    x, other = mt.tensor([0.0, 1.0, 2.0, 3.0]).to(dtype), mt.tensor([1.0, 1.0, 1.0, 5.0]).to(dtype)
    expected = op(x, other).to(dtype).tolist()
    assert getattr(x, name)(other) is x and x.dtype is dtype and x.tolist() == expected


def test_in_place_comparison_cuts_the_old_values_gradient():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    view, version = y[1:], y._version
    assert y.eq_(2) is y and y.tolist() == [1.0, 0.0] and view.tolist() == [0.0] and y._version == version + 1
    (y * 3).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]  # as PyTorch: a comparison has a zero gradient
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.ge_(1)


def test_positive_and_rsub():
    x = mt.tensor(X, requires_grad=True)
    assert mt.positive(x) is x and x.positive() is x
    with pytest.raises(RuntimeError, match="on a bool tensor is not supported"):
        mt.positive(mt.tensor([True]))
    assert run(lambda a, b: mt.rsub(a, b, alpha=2), 2) == run(lambda a, b: mt.sub(b, a, alpha=2), 2)
    assert mt.rsub(mt.tensor([1.0, 2.0]), 5).tolist() == [4.0, 3.0]
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.rsub(2, mt.tensor([1.0]))
    assert not hasattr(mt.Tensor, "rsub")  # torch.rsub only


def test_fill_is_a_new_tensor():
    x = mt.tensor(X, requires_grad=True)
    y = mt.fill(x, 2.5)
    assert y.tolist() == [[2.5] * 3] * 2 and x.tolist() == X
    y.sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2  # as PyTorch: nothing flows back to the overwritten values


# The top-level in-place functions: minitensor.<name>(x, *args) is x.<name>(*args).
TOP_LEVEL_ARGS = {"xlogy_": (2.0,), "clamp_": (-1, 2), "clamp_min_": (0.5,), "clamp_max_": (0.5,), "clip_": (-1, 2),
                  "fill_": (7.0,), "gcd_": (mt.tensor([4, 6]),), "lcm_": (mt.tensor([4, 6]),),
                  "ldexp_": (mt.tensor([1, 2]),), "addmv_": (mt.ones(2, 2), mt.tensor([1.0, 2.0])),
                  "as_strided_": ((1,), (1,)), "index_put_": ((mt.tensor([0]),), mt.tensor(5.0)),
                  "resize_as_": (mt.ones(1),)}
POSITIVE = [0.25, 0.75]  # in every op's domain (acosh_ takes 1 + these)


@pytest.mark.parametrize("name", [n for n in mt.functional.aliases.METHODS if n.endswith("_")])
def test_top_level_in_place_function_is_the_method(name):
    values = [6, 10] if name in ("gcd_", "lcm_") else [1 + v for v in POSITIVE] if name in ("acosh_", "arccosh_") \
        else POSITIVE
    a, b = mt.tensor(values), mt.tensor(values)
    args = TOP_LEVEL_ARGS.get(name, ())
    assert getattr(mt, name)(a, *args) is a
    assert getattr(b, name)(*args) is b
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    if name not in ("detach_", "fill_", "zero_", "clamp_max_", "clamp_min_", "clip_", "clamp_", "relu_", "abs_",
                    "frac_", "nan_to_num_"):
        assert a.tolist() != values, name  # the op changed it
    with pytest.raises(TypeError, match="must be Tensor"):
        getattr(mt, name)(values, *args)


def test_queries():
    assert [mt.tensor([1], dtype=d).is_signed() for d in (mt.uint8, mt.bool, mt.int8, mt.int64, mt.float16)] == \
        [False, False, True, True, True]
    assert mt.is_signed(mt.tensor([1.0])) is True
    assert mt.is_nonzero(mt.tensor([[2.0]])) is True and mt.tensor(0).is_nonzero() is False
    assert mt.tensor([NAN]).is_nonzero() is True and mt.tensor([False]).is_nonzero() is False
    with pytest.raises(RuntimeError, match="with no values is ambiguous"):
        mt.is_nonzero(mt.tensor([]))
    with pytest.raises(RuntimeError, match="with more than one value is ambiguous"):
        mt.tensor([1, 0]).is_nonzero()
    assert mt.is_same_size(mt.ones(2, 3), mt.zeros(2, 3, dtype=mt.int64))
    assert not mt.ones(2, 3).is_same_size(mt.ones(3, 2))
    assert mt.ones(2).get_device() == -1 and mt.get_device(mt.ones(2)) == -1
    assert mt.ones(2, 3, 1).ndimension() == 3 and mt.tensor(1.0).ndimension() == 0
    assert [mt.tensor([1.7, -1.2, 300.0]).__getattribute__(c)().dtype for c in ("byte", "char", "short")] == \
        [mt.uint8, mt.int8, mt.int16]
    assert mt.tensor([1.7, -1.2, 3.0]).short().tolist() == [1, -1, 3]


def test_retains_grad_reflects_retain_grad():
    x = mt.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    assert not x.retains_grad and not y.retains_grad
    y.retain_grad()
    assert y.retains_grad and not z.retains_grad
    (y + z).sum().backward()
    assert y.grad.tolist() == [1.0, 1.0] and z.grad is None


def test_activations_at_the_top_level_are_nn_functionals():
    for name in ("celu", "celu_", "hardshrink", "prelu", "rrelu", "rrelu_", "selu", "selu_", "threshold",
                 "threshold_"):
        assert getattr(mt, name) is getattr(F, name), name
    x = mt.tensor(X, requires_grad=True)
    assert x.hardshrink(1.0).tolist() == F.hardshrink(x, 1.0).tolist()
    w = mt.tensor([0.25, 0.5, 2.0])
    assert x.prelu(w).tolist() == F.prelu(x, w).tolist()


def test_rrelu_evaluation_is_leaky_relu_and_training_draws_slopes():
    x = mt.tensor(X, dtype=mt.float64, requires_grad=True)
    assert run(mt.rrelu, 1) == run(lambda a: F.leaky_relu(a, (1 / 8 + 1 / 3) / 2), 1)
    mt.manual_seed(0)
    xs = mt.randn(1000, dtype=mt.float64, requires_grad=True)
    y = mt.rrelu(xs, 0.1, 0.3, training=True)
    y.sum().backward()
    neg = xs.detach().numpy() < 0
    slopes = y.detach().numpy()[neg] / xs.detach().numpy()[neg]
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and slopes.std() > 0.03
    np.testing.assert_allclose(xs.grad.numpy()[neg], slopes, rtol=1e-12)
    assert (xs.grad.numpy()[~neg] == 1).all() and (y.detach().numpy()[~neg] == xs.detach().numpy()[~neg]).all()
    z = mt.tensor([-2.0, 1.0])
    assert mt.rrelu_(z) is z and z.tolist() == pytest.approx([-2 * (1 / 8 + 1 / 3) / 2, 1.0])
    assert x.grad is None


def test_sgn_and_sign_give_zero_at_nan():
    x = mt.tensor([NAN, -INF, INF, -0.0, -2.0], dtype=mt.float64)
    assert mt.sgn(x).tolist() == x.sign().tolist() == [0.0, -1.0, 1.0, 0.0, -1.0]
    assert mt.tensor([-3, 0, 5]).sgn().tolist() == [-1, 0, 1]
    assert mt.tensor([NAN, -1.0], dtype=mt.float16).sgn().tolist() == [0.0, -1.0]
