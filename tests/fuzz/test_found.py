"""Regression tests (no torch) for the differences the differential fuzzing found and fixed: PyTorch's
results written out, NumPy float64 or exact references."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt


def test_sign_and_sgn_of_a_bool_tensor_are_the_tensor():
    x = mt.tensor([True, False])
    for y in (mt.sign(x), mt.sgn(x), x.sign()):
        assert y.dtype == mt.bool and y.tolist() == [True, False]


@pytest.mark.parametrize("name", ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "less_", "not_equal_"])
def test_an_in_place_comparison_does_not_broadcast_self(name):
    x = mt.tensor(2.0)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(x, name)(mt.tensor([1.0]))
    y = mt.tensor([[1.0, 3.0]])
    assert getattr(y, name)(mt.tensor([2.0])).shape == (1, 2)


def test_div_in_place_takes_a_rounding_mode():
    x = mt.tensor([7.0, -7.0])
    assert x.clone().div_(mt.tensor(2.0), rounding_mode="trunc").tolist() == [3.0, -3.0]
    assert x.clone().div_(2.0, rounding_mode="floor").tolist() == [3.0, -4.0]
    assert x.clone().div_(2.0).tolist() == [3.5, -3.5]


@pytest.mark.parametrize("dim", [0, -1])
def test_prod_of_a_0d_integer_tensor_over_its_dim(dim):
    for x in (mt.tensor(3), mt.tensor(True)):
        y = mt.prod(x, dim)
        assert y.shape == () and y.item() == int(x.item()) and y.dtype == mt.int64


def test_lgamma_at_subnormal_inputs_is_minus_log_abs_x():
    x = np.array([5e-324, -5e-324, 1e-310, 1e-300, 0.0])
    y = mt.lgamma(mt.tensor(x)).numpy()
    np.testing.assert_allclose(y[:4], -np.log(np.abs(x[:4])), rtol=1e-15)
    assert y[4] == math.inf
    assert mt.mvlgamma(mt.tensor([5e-324], dtype=mt.float64), 1).item() == pytest.approx(744.4400719213812)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_i1_gradient_at_subnormal_inputs_is_the_limit_one_half(name):
    x = mt.tensor([5e-324, -1e-310, 1e-200, 0.0, -0.0], dtype=mt.float64, requires_grad=True)
    getattr(mt.special, name)(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5] * 5, rtol=1e-15)
    x32 = mt.tensor([0.0, -0.0, 1e-40], requires_grad=True)  # float32: 1e-100 rounds to 0 there
    getattr(mt.special, name)(x32).sum().backward()
    np.testing.assert_allclose(x32.grad.numpy(), [0.5] * 3, rtol=1e-6)


def test_combinations_of_a_bool_tensor_index_by_position():
    x = mt.tensor([True, True, False, False])
    assert mt.combinations(x, 1).tolist() == [[True], [True], [False], [False]]
    assert mt.combinations(mt.tensor([True, False, True]), 2).tolist() == [[True, False], [True, True], [False, True]]


def test_gather_index_select_and_index_fill_of_a_0d_tensor():
    x = mt.tensor(5.0, requires_grad=True)
    for dim in (0, -1):
        assert mt.gather(x, dim, mt.tensor(0)).shape == () and mt.gather(x, dim, mt.tensor(0)).item() == 5.0
    y = mt.index_select(x, 0, mt.tensor([0]))
    assert y.shape == () and y.item() == 5.0
    y.backward()
    assert x.grad.item() == 1.0
    with pytest.raises(IndexError, match="only 1 value"):
        mt.index_select(x, 0, mt.tensor([0, 0]))
    z = mt.tensor(3.0)
    assert mt.index_fill(z, 0, mt.tensor([0, 0]), 1.0).item() == 1.0
    assert mt.index_fill(z, -1, mt.tensor([], dtype=mt.int64), 1.0).item() == 3.0
    assert z.index_fill_(0, mt.tensor(0), 2.0).shape == () and z.item() == 2.0


def test_cov_and_corrcoef_of_one_variable_in_rows_are_0d():
    x = np.array([[1.0, 2.0, 4.0]])
    c = mt.cov(mt.tensor(x))
    assert c.shape == () and c.item() == pytest.approx(np.cov(x).item())
    assert mt.corrcoef(mt.tensor(x)).shape == ()
    assert mt.cov(mt.tensor(np.ones((2, 3)))).shape == (2, 2)


@pytest.mark.parametrize("value", [6, 4.5, -1e30, 30.0])
def test_erfc_and_ndtr_of_0d_tensors_past_the_tail_bound(value):
    y = mt.erfc(mt.tensor(value))
    assert y.shape == () and y.item() == pytest.approx(math.erfc(value), rel=1e-6, abs=1e-300)
    assert mt.special.ndtr(mt.tensor(float(value))).item() == pytest.approx(0.5 * math.erfc(-value / math.sqrt(2)))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod"])
def test_an_empty_integer_tensor_divided_by_zero_does_not_raise(name):
    x = mt.zeros((3, 0), dtype=mt.int64)
    for divisor in (0, mt.tensor(0), mt.tensor([[0]])):
        y = getattr(mt, name)(x, divisor)
        assert y.shape == (3, 0) and y.dtype == mt.int64
    with pytest.raises(ZeroDivisionError):
        getattr(mt, name)(mt.tensor([3]), 0)
