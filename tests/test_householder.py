"""linalg.householder_product (torch.orgqr, Tensor.orgqr) and torch.geqrf: geqrf's Householder form gives back
NumPy's Q and R, householder_product against an explicit product of reflectors (NumPy, float64) over batch
shapes, gradcheck / gradgradcheck to A and tau, PyTorch's errors; torch parity where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.testing import gradgradcheck

from helpers import FEW, SETTINGS, as_np, assert_close, check_grad, randn, seeds, t64

batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)


def reflectors(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, each H_i built explicitly."""
    m, n = a.shape[-2:]
    q = np.broadcast_to(np.eye(m), a.shape[:-2] + (m, m))
    for i in range(tau.shape[-1]):
        v = np.concatenate([np.zeros(a.shape[:-2] + (i,)), np.ones(a.shape[:-2] + (1,)), a[..., i + 1:, i]], -1)
        h = np.eye(m) - tau[..., i, None, None] * v[..., :, None] * v[..., None, :]
        q = q @ h
    return q[..., :, :n]


@SETTINGS
@given(batch=batches, m=st.integers(1, 5), n=st.integers(1, 5), k=st.integers(0, 5), seed=seeds)
def test_householder_product_matches_explicit_reflectors(batch, m, n, k, seed):
    m, n = max(m, n), min(m, n)
    k = min(k, n)
    a, tau = randn(seed, batch + (m, n)), randn(seed + 1, batch + (k,))
    assert_close(mt.linalg.householder_product(t64(a, False), t64(tau, False)), reflectors(a, tau), rtol=1e-10,
                 atol=1e-12)


@FEW
@given(batch=batches, m=st.integers(1, 4), seed=seeds)
def test_householder_product_gradients(batch, m, seed):
    n = max(1, m - 1)
    check_grad(mt.linalg.householder_product, randn(seed, batch + (m, n)), randn(seed + 1, batch + (n,)))


def test_householder_product_double_backward():
    assert gradgradcheck(mt.linalg.householder_product, [t64(randn(0, (2, 4, 3))), t64(randn(1, (2, 2)))])


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 2), (3, 3), (2, 3, 4)])
def test_geqrf_is_numpys_qr_in_householder_form(shape):
    a = randn(2, shape)
    h, tau = mt.geqrf(t64(a, False))
    k = min(shape[-2:])
    assert tuple(tau.shape) == shape[:-2] + (k,)
    q_ref, r_ref = np.linalg.qr(a)
    assert_close(h.triu()[..., :k, :], r_ref, rtol=1e-10, atol=1e-12)
    if shape[-2] >= shape[-1]:
        assert_close(mt.linalg.householder_product(h, tau), q_ref, rtol=1e-10, atol=1e-12)
        assert_close(mt.orgqr(h, tau), q_ref, rtol=1e-10, atol=1e-12)
        assert_close(h.orgqr(tau), q_ref, rtol=1e-10, atol=1e-12)
    assert type(t64(a, False).geqrf()).__name__ == "geqrf"


def test_errors():
    H = mt.linalg.householder_product
    name = "torch.linalg.householder_product"
    with pytest.raises(RuntimeError, match=f"{name}: input must have at least 2 dimensions."):
        H(mt.ones(3), mt.ones(2))
    with pytest.raises(RuntimeError, match=f"{name}: input.shape.-2. must be greater than or equal to input.shape.-1."):
        H(mt.ones(2, 3), mt.ones(2))
    with pytest.raises(RuntimeError, match=f"{name}: input.shape.-1. must be greater than or equal to tau.shape.-1."):
        H(mt.ones(3, 2), mt.ones(3))
    with pytest.raises(RuntimeError, match="Expected tau to have one dimension less than input, but got tau.ndim "
                                           "equal to 2 and input.ndim is equal to 2"):
        H(mt.ones(3, 2), mt.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"Expected batch dimensions of tau to be equal to input.shape\[:-2\], but "
                                           r"got \[3\]"):
        H(mt.ones(2, 3, 2), mt.ones(3, 2))
    with pytest.raises(RuntimeError, match="tau dtype Double does not match input dtype Float"):
        H(mt.ones(3, 2), mt.ones(2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="torch.geqrf: input must have at least 2 dimensions."):
        mt.geqrf(mt.ones(3))
    with pytest.raises(NotImplementedError, match="\"geqrf_cpu\" not implemented for 'Half'"):
        mt.geqrf(mt.ones(3, 3, dtype=mt.float16))
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented."):
        mt.geqrf(mt.ones(3, 3, requires_grad=True)).a.sum().backward()


def test_householder_on_device(device):
    a = randn(3, (2, 4, 3))
    h, tau = mt.geqrf(mt.tensor(a, device=device))
    assert_close(mt.linalg.householder_product(h, tau).cpu(), np.linalg.qr(a)[0], rtol=1e-10, atol=1e-12)


@pytest.mark.torch
def test_householder_matches_torch():
    torch = pytest.importorskip("torch")
    a, tau, g = randn(4, (2, 5, 3)), randn(5, (2, 2)), randn(6, (2, 5, 3))
    A, T = t64(a), t64(tau)
    At, Tt = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)
    q, qt = mt.linalg.householder_product(A, T), torch.linalg.householder_product(At, Tt)
    assert_close(q, qt.detach().numpy(), rtol=1e-10, atol=1e-12)
    q.backward(mt.tensor(g))
    qt.backward(torch.tensor(g))
    assert_close(A.grad, At.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert_close(T.grad, Tt.grad.numpy(), rtol=1e-9, atol=1e-12)
    h, t = mt.geqrf(t64(a, False))
    ht, tt = torch.geqrf(torch.tensor(a))
    assert_close(h, ht.numpy(), rtol=1e-10, atol=1e-12)
    assert_close(t, tt.numpy(), rtol=1e-10, atol=1e-12)
    assert as_np(h).shape == (2, 5, 3)
