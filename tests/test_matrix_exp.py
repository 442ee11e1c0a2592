"""linalg.matrix_exp (torch.matrix_exp, Tensor.matrix_exp) vs scipy.linalg.expm float64 over batch shapes and
norms (different 2^s scalings in one batch), gradcheck / gradgradcheck of the block-matrix Frechet gradient,
PyTorch's errors; torch parity where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.testing import gradgradcheck

from helpers import FEW, SETTINGS, as_np, assert_close, check_grad, randn, seeds, t64

batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)


@SETTINGS
@given(batch=batches, n=st.integers(1, 5), scale=st.sampled_from([0.01, 0.5, 3.0, 20.0]), seed=seeds)
def test_matrix_exp_matches_scipy(batch, n, scale, seed):
    a = randn(seed, batch + (n, n)) * scale
    a = a * np.linspace(0.1, 1.0, int(np.prod(batch)) or 1).reshape(batch + (1, 1))  # norms differ in the batch
    assert_close(mt.linalg.matrix_exp(t64(a, False)), scipy.linalg.expm(a), rtol=1e-9, atol=1e-10)


@FEW
@given(batch=batches, n=st.integers(1, 4), scale=st.sampled_from([0.3, 1.0, 3.0]), seed=seeds)
def test_matrix_exp_gradient(batch, n, scale, seed):  # larger norms: the torch test (finite differences of e^20 blur)
    check_grad(mt.linalg.matrix_exp, randn(seed, batch + (n, n)) * scale)


def test_matrix_exp_gradient_is_the_frechet_derivative():
    """<g, d exp(A)[E]> against a central difference of exp along E (not through minitensor's gradcheck)."""
    a, e, g = randn(0, (4, 4)), randn(1, (4, 4)), randn(2, (4, 4))
    A = t64(a)
    mt.linalg.matrix_exp(A).backward(mt.tensor(g))
    h = 1e-6
    directional = (scipy.linalg.expm(a + h * e) - scipy.linalg.expm(a - h * e)) / (2 * h)
    np.testing.assert_allclose((as_np(A.grad) * e).sum(), (g * directional).sum(), rtol=1e-7)


def test_matrix_exp_double_backward():
    assert gradgradcheck(mt.linalg.matrix_exp, [t64(randn(3, (2, 3, 3)))])


def test_matrix_exp_names_and_special_inputs():
    a = randn(4, (2, 3, 3))
    A = t64(a, False)
    ref = scipy.linalg.expm(a)
    for out in (mt.matrix_exp(A), A.matrix_exp(), mt.linalg.matrix_exp(A)):
        assert_close(out, ref, rtol=1e-10)
    assert_close(mt.linalg.matrix_exp(mt.zeros(2, 3, 3)), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-15)
    assert mt.linalg.matrix_exp(mt.zeros(0, 3, 3)).shape == (0, 3, 3)
    assert mt.linalg.matrix_exp(mt.zeros(2, 0, 0)).shape == (2, 0, 0)
    f32 = mt.linalg.matrix_exp(A.float())
    assert f32.dtype == mt.float32
    assert_close(f32, ref, rtol=1e-5, atol=1e-6)
    half = mt.linalg.matrix_exp(A.half() * 0.5)  # computed in float32, rounded to float16
    assert half.dtype == mt.float16
    assert_close(half.float(), scipy.linalg.expm(as_np((A.half() * 0.5).double())), rtol=2e-3, atol=2e-3)
    bad = mt.linalg.matrix_exp(mt.tensor([[[np.nan, 0.0], [0.0, 1.0]], [[np.inf, 0.0], [0.0, 1.0]],
                                           [[1.0, 0.0], [0.0, 1.0]]]))
    assert np.isnan(as_np(bad[:2])).all()  # a non-finite matrix: all NaN, as PyTorch
    assert_close(bad[2], np.e * np.eye(2), rtol=1e-6)


def test_matrix_exp_errors():
    with pytest.raises(RuntimeError, match="linalg.matrix_exp: The input tensor A must have at least 2 dimensions."):
        mt.linalg.matrix_exp(mt.ones(3))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices, but they are 3 by 2 matrices"):
        mt.linalg.matrix_exp(mt.ones(3, 2))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as input. Got"):
        mt.linalg.matrix_exp(mt.ones(3, 3, dtype=mt.int64))


def test_matrix_exp_on_device(device):
    a = randn(5, (3, 4, 4)) * np.array([0.1, 3.0, 30.0])[:, None, None]
    A = mt.tensor(a, device=device, requires_grad=True)
    out = mt.linalg.matrix_exp(A)
    assert_close(out.cpu(), scipy.linalg.expm(a), rtol=1e-9, atol=1e-9)
    out.sum().backward()
    ref = t64(a)
    mt.linalg.matrix_exp(ref).sum().backward()
    assert_close(A.grad.cpu(), as_np(ref.grad), rtol=1e-8, atol=1e-8)


@pytest.mark.torch
def test_matrix_exp_matches_torch():
    torch = pytest.importorskip("torch")
    for shape, scale in (((3, 3), 0.5), ((2, 4, 4), 4.0), ((2, 1, 5, 5), 40.0)):
        a, g = randn(6, shape) * scale, randn(7, shape)
        A, T = t64(a), torch.tensor(a, requires_grad=True)
        out, ref = mt.linalg.matrix_exp(A), torch.linalg.matrix_exp(T)
        assert_close(out, ref.detach().numpy(), rtol=1e-9, atol=1e-9)
        out.backward(mt.tensor(g))
        ref.backward(torch.tensor(g))
        assert_close(A.grad, T.grad.numpy(), rtol=1e-8, atol=1e-8)
