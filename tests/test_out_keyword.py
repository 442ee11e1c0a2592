"""``out=`` on the arithmetic ops (pytorch/tutorials' blitz/tensor_tutorial.py: ``torch.add(x, y, out=result)``):
the result is written into ``out`` (cast to its dtype, resized where its shape differs) and ``out`` returned."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "true_divide"])
def test_out_receives_the_result_and_is_returned(name):
    x, y = mt.randn(5, 3), mt.rand(5, 3) + 0.5
    out = mt.empty(5, 3)
    ptr = out.data_ptr()
    got = getattr(mt, name)(x, y, out=out)
    assert got is out and out.data_ptr() == ptr  # written into out's own memory
    np.testing.assert_allclose(out.numpy(), getattr(mt, name)(x, y).numpy(), rtol=1e-6)


def test_out_keeps_its_dtype_and_views_see_the_write():
    out = mt.zeros(2, 3, dtype=mt.float64)
    view = out[1]
    mt.add(mt.tensor([[1, 2, 3], [4, 5, 6]]), 1, alpha=2, out=out)  # int64 result, cast to float64
    assert out.dtype == mt.float64
    np.testing.assert_array_equal(out.numpy(), [[3, 4, 5], [6, 7, 8]])
    np.testing.assert_array_equal(view.numpy(), [6, 7, 8])
    mt.div(mt.tensor([7, -7]), 2, rounding_mode="floor", out=out[0, :2])
    np.testing.assert_array_equal(out.numpy()[0], [3, -4, 5])


def test_out_is_resized_when_its_shape_differs():
    out = mt.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        mt.mul(mt.ones(2, 2), 3, out=out)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 3.0))
    with pytest.warns(UserWarning, match="was resized since it had shape"):
        mt.sub(mt.ones(3), 1, out=out)
    assert out.shape == (3,)


def test_out_refuses_a_result_it_cannot_hold_and_autograd():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        mt.add(mt.ones(2), 1, out=mt.zeros(2, dtype=mt.long))
    x = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        mt.mul(x, 2, out=mt.empty(2))
    with mt.no_grad():  # outside grad mode it runs
        assert mt.mul(x, 2, out=mt.empty(2)).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="'out' must be Tensor"):
        mt.add(mt.ones(2), 1, out=[0.0, 0.0])


@pytest.mark.torch
def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    a, b = np.arange(6.0).reshape(2, 3) - 2, np.array([1.5, -2.0, 3.0])
    for name, kw in [("add", {"alpha": 3}), ("sub", {}), ("mul", {}), ("div", {}), ("div", {"rounding_mode": "trunc"})]:
        ours, theirs = mt.zeros(2, 3, dtype=mt.float64), torch.zeros(2, 3, dtype=torch.float64)
        getattr(mt, name)(mt.tensor(a), mt.tensor(b), out=ours, **kw)
        getattr(torch, name)(torch.tensor(a), torch.tensor(b), out=theirs, **kw)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="can't be cast") as theirs_err:
        torch.add(torch.ones(2), 1, out=torch.zeros(2, dtype=torch.long))
    with pytest.raises(RuntimeError, match="can't be cast") as ours_err:
        mt.add(mt.ones(2), 1, out=mt.zeros(2, dtype=mt.long))
    assert str(ours_err.value) == str(theirs_err.value)


def test_matrix_products_write_into_out_of_their_dtype():
    """pytorch/tutorials' basics/tensorqs_tutorial.py: ``torch.matmul(tensor, tensor.T, out=y3)``."""
    a, b = mt.randn(4, 3), mt.randn(3, 5)
    for name, x, y in [("matmul", a, b), ("mm", a, b), ("bmm", a.unsqueeze(0), b.unsqueeze(0))]:
        expect = getattr(mt, name)(x, y).numpy()
        out = mt.rand(*expect.shape)
        assert getattr(mt, name)(x, y, out=out) is out
        np.testing.assert_allclose(out.numpy(), expect, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        mt.matmul(a, b, out=mt.empty(4, 5, dtype=mt.float64))  # PyTorch's products do not cast into out


@pytest.mark.torch
def test_matrix_products_match_pytorch():
    torch = pytest.importorskip("torch")
    a, b = np.random.default_rng(0).standard_normal((2, 4, 3)), np.random.default_rng(1).standard_normal((2, 3, 5))
    ours, theirs = mt.empty(0, dtype=mt.float64), torch.empty(0, dtype=torch.float64)
    mt.matmul(mt.tensor(a), mt.tensor(b), out=ours)
    torch.matmul(torch.tensor(a), torch.tensor(b), out=theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        torch.matmul(torch.tensor(a), torch.tensor(b), out=torch.empty(0))
