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
