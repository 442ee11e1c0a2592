"""linalg.lu_factor / lu_factor_ex / lu / lu_solve, torch.lu_unpack and the older torch.lu / torch.lu_solve:
LU and getrf's 1-based int32 pivots vs scipy.linalg.lu_factor (float64) over batch shapes (square, wide and
tall), P L U = A, gradcheck of the factorization (torch's linalg_lu_backward, three shape cases) and of
lu_solve (left / adjoint, to LU and B), PyTorch's errors; torch parity where torch is installed."""
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

L = mt.linalg
batches = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def scipy_lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scipy.linalg.lu_factor matrix by matrix (a test reference only), pivots made 1-based."""
    flat = a.reshape((-1,) + a.shape[-2:])
    out = [scipy.linalg.lu_factor(m) for m in flat]
    k = min(a.shape[-2:])
    return (np.stack([o[0] for o in out]).reshape(a.shape),
            np.stack([o[1][:k] + 1 for o in out]).reshape(a.shape[:-2] + (k,)))


@SETTINGS
@given(batch=batches, m=st.integers(1, 5), n=st.integers(1, 5), seed=seeds)
def test_lu_factor_matches_scipy_and_reconstructs(batch, m, n, seed):
    a = randn(seed, batch + (m, n))
    LU, pivots, info = L.lu_factor_ex(t64(a, False))
    ref_lu, ref_piv = scipy_lu_factor(a)
    assert pivots.dtype == mt.int32 and info.dtype == mt.int32 and tuple(info.shape) == batch
    assert_close(LU, ref_lu, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(as_np(pivots), ref_piv)
    P, Lo, U = L.lu(t64(a, False))
    k = min(m, n)
    assert P.shape == batch + (m, m) and Lo.shape == batch + (m, k) and U.shape == batch + (k, n)
    assert_close(P @ Lo @ U, a, rtol=1e-10, atol=1e-12)
    P2, L2, U2 = mt.lu_unpack(LU, pivots)
    assert_close(P2, P)
    assert_close(L2, Lo)
    assert_close(U2, U)


@FEW
@given(batch=batches, m=st.integers(1, 4), n=st.integers(1, 4), seed=seeds)
def test_lu_gradients(batch, m, n, seed):
    a = randn(seed, batch + (m, n)) + 2 * np.eye(m, n)  # pivots away from ties
    check_grad(lambda x: L.lu_factor(x).LU, a)
    check_grad(lambda x: L.lu(x).L, a)
    check_grad(lambda x: L.lu(x).U, a)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_numpy_with_gradients(left, adjoint):
    a = randn(0, (2, 3, 3))
    b = randn(1, (2, 3, 2) if left else (2, 2, 3))
    A = np.swapaxes(a, -1, -2) if adjoint else a
    expected = np.linalg.solve(A, b) if left else np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2),
                                                                              np.swapaxes(b, -1, -2)), -1, -2)
    LU, pivots = L.lu_factor(t64(a, False))
    assert_close(L.lu_solve(LU, pivots, t64(b, False), left=left, adjoint=adjoint), expected, rtol=1e-10, atol=1e-12)
    check_grad(lambda lu, rhs: L.lu_solve(lu, pivots, rhs, left=left, adjoint=adjoint), as_np(LU), b)
    # end to end: the gradient of A's solve through the factorization is solve's
    check_grad(lambda x, rhs: L.lu_solve(*L.lu_factor(x), rhs, left=left, adjoint=adjoint), a, b)


@pytest.mark.parametrize("shape", [(2, 3, 3), (2, 3, 2), (2, 2, 3)])
def test_lu_double_backward(shape):
    a = randn(15, shape) + 2 * np.eye(*shape[-2:])
    assert gradgradcheck(lambda x: L.lu_factor(x).LU, [t64(a)])
    if shape[-1] == shape[-2]:
        LU, pivots = L.lu_factor(t64(a, False))
        assert gradgradcheck(lambda lu, b: L.lu_solve(lu, pivots, b, adjoint=True), [t64(as_np(LU)),
                                                                                   t64(randn(16, (2, 3, 2)))])


def test_lu_solve_broadcasts_batches():
    a, b = randn(2, (3, 1, 4, 4)), randn(3, (2, 4, 2))
    LU, pivots = L.lu_factor(t64(a, False))
    x = L.lu_solve(LU, pivots, t64(b, False))
    assert x.shape == (3, 2, 4, 2)
    assert_close(x, np.linalg.solve(a, b), rtol=1e-10, atol=1e-12)


def test_singular_input_info_and_errors():
    a = np.stack([np.eye(2), SINGULAR, np.zeros((2, 2))])
    LU, pivots, info = L.lu_factor_ex(mt.tensor(a))
    assert as_np(info).tolist() == [0, 2, 1]  # no error: the first exact zero on U's diagonal
    assert as_np(pivots).tolist() == [[1, 2], [2, 2], [1, 2]]
    assert_close(LU[1], [[2.0, 4.0], [0.5, 0.0]])
    msg = (r"torch.linalg.lu_factor: \(Batch element 1\): U\[2,2\] is zero and using it on lu_solve would result in "
           r"a division by zero. If you still want to perform the factorization, consider calling linalg.lu\(A, "
           r"pivot\) or linalg.lu_factor_ex\(A, pivot\)")
    with pytest.raises(RuntimeError, match=msg):
        L.lu_factor(mt.tensor(a))
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor: U\[2,2\] is zero"):
        L.lu_factor(mt.tensor(SINGULAR))
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor_ex: \(Batch element 1\): U\[2,2\] is zero"):
        L.lu_factor_ex(mt.tensor(a), check_errors=True)
    P, Lo, U = L.lu(mt.tensor(SINGULAR))  # linalg.lu: no error
    assert_close(P @ Lo @ U, SINGULAR)


def test_argument_errors():
    A = mt.tensor(randn(0, (3, 3)))
    for f in (L.lu_factor, L.lu_factor_ex, L.lu):
        with pytest.raises(RuntimeError, match="linalg.lu_factor: LU without pivoting is not implemented on the CPU"):
            f(A, pivot=False)
    with pytest.raises(RuntimeError, match=r"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: "
                                           r"\[3\] instead"):
        L.lu_factor(mt.ones(3))
    for dt, name in ((mt.int64, "Long"), (mt.float16, "Half"), (mt.bfloat16, "BFloat16")):
        with pytest.raises(NotImplementedError, match=f"\"lu_cpu\" not implemented for '{name}'"):
            L.lu_factor(mt.ones(3, 3, dtype=dt))
    LU, pivots = L.lu_factor(A)
    with pytest.raises(RuntimeError, match=r"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
                                           r"\(3x3 and 2x2\)"):
        L.lu_solve(LU, pivots, mt.ones(2, 2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match=r"equation XA = B \(3x3 and 3x2\)"):
        L.lu_solve(LU, pivots, mt.ones(3, 2, dtype=mt.float64), left=False)
    with pytest.raises(RuntimeError, match="linalg.lu_solve: The input tensor B must have at least 2 dimensions."):
        L.lu_solve(LU, pivots, mt.ones(3, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="Expected LU and B to have the same dtype, but found LU of type Double and "
                                           "B of type Float instead"):
        L.lu_solve(LU, pivots, mt.ones(3, 2))
    with pytest.raises(RuntimeError, match="linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"):
        L.lu_solve(LU, pivots.long(), mt.ones(3, 2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="Number of pivots per batch should be same as the dimension"):
        L.lu_solve(LU, pivots[:2], mt.ones(3, 2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="torch.linalg.lu_solve: A must be batches of square matrices, but they "
                                           "are 3 by 2 matrices"):
        L.lu_solve(LU[:, :2], pivots, mt.ones(3, 2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="LU_pivots is expected to be a contiguous tensor of torch.int32 dtype"):
        mt.lu_unpack(LU, pivots.long())


def test_lu_unpack_flags_and_older_forms():
    a = randn(4, (2, 3, 3))
    A = t64(a, False)
    LU, pivots = L.lu_factor(A)
    P, Lo, U = mt.lu_unpack(LU, pivots, unpack_data=False)
    assert Lo.shape == (0,) and U.shape == (0,) and P.shape == (2, 3, 3)
    P, Lo, U = mt.lu_unpack(LU, pivots, unpack_pivots=False)
    assert P.shape == (0,) and Lo.shape == (2, 3, 3)
    LU2, piv2 = mt.lu(A)
    assert_close(LU2, LU)
    LU3, piv3, infos = A.lu(get_infos=True)
    assert as_np(infos).tolist() == [0, 0]
    b = randn(5, (2, 3, 1))
    assert_close(mt.lu_solve(t64(b, False), LU, pivots), np.linalg.solve(a, b), rtol=1e-10)
    assert_close(t64(b, False).lu_solve(LU, pivots), np.linalg.solve(a, b), rtol=1e-10)
    assert type(L.lu_factor(A)).__name__ == "linalg_lu_factor" and L.lu(A).__match_args__ == ("P", "L", "U")
    assert L.lu_factor_ex(A).__match_args__ == ("LU", "pivots", "info")


def test_lu_on_device(device):
    a, b = randn(6, (2, 4, 4)), randn(7, (2, 4, 3))
    A = mt.tensor(a, device=device, requires_grad=True)
    LU, pivots = L.lu_factor(A)
    ref_lu, ref_piv = scipy_lu_factor(a)
    assert_close(LU.detach().cpu(), ref_lu, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(as_np(pivots.cpu()), ref_piv)
    x = L.lu_solve(LU, pivots, mt.tensor(b, device=device))
    assert_close(x.detach().cpu(), np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)
    x.sum().backward()
    ref = t64(a)
    mt.linalg.solve(ref, t64(b, False)).sum().backward()
    assert_close(A.grad.cpu(), as_np(ref.grad), rtol=1e-8, atol=1e-10)


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (2, 3, 5), (2, 5, 3)])
def test_lu_matches_torch(shape):
    torch = pytest.importorskip("torch")
    a, g = randn(8, shape), randn(9, shape)
    A, T = t64(a), torch.tensor(a, requires_grad=True)
    LU, pivots = L.lu_factor(A)
    LUt, pivt = torch.linalg.lu_factor(T)
    assert_close(LU, LUt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(as_np(pivots), pivt.numpy())
    LU.backward(mt.tensor(g))
    LUt.backward(torch.tensor(g))
    assert_close(A.grad, T.grad.numpy(), rtol=1e-8, atol=1e-10)
    A.grad = None
    T.grad = None
    P, Lo, U = L.lu(A)
    Pt, Lt, Ut = torch.linalg.lu(T)
    for mine, theirs in ((P, Pt), (Lo, Lt), (U, Ut)):
        assert_close(mine, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    gl, gu = randn(10, tuple(Lo.shape)), randn(11, tuple(U.shape))
    ((Lo * mt.tensor(gl)).sum() + (U * mt.tensor(gu)).sum()).backward()
    ((Lt * torch.tensor(gl)).sum() + (Ut * torch.tensor(gu)).sum()).backward()
    assert_close(A.grad, T.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.torch
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_matches_torch(left, adjoint):
    torch = pytest.importorskip("torch")
    lu_np = as_np(L.lu_factor(t64(randn(12, (2, 3, 3)), False)).LU)
    pivots = L.lu_factor(t64(randn(12, (2, 3, 3)), False)).pivots
    b = randn(13, (2, 3, 2) if left else (2, 2, 3))
    LU, B_ = t64(lu_np), t64(b)
    LUt, Bt = torch.tensor(lu_np, requires_grad=True), torch.tensor(b, requires_grad=True)
    x = L.lu_solve(LU, pivots, B_, left=left, adjoint=adjoint)
    xt = torch.linalg.lu_solve(LUt, torch.tensor(as_np(pivots)), Bt, left=left, adjoint=adjoint)
    assert_close(x, xt.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = randn(14, tuple(x.shape))
    x.backward(mt.tensor(g))
    xt.backward(torch.tensor(g))
    assert_close(LU.grad, LUt.grad.numpy(), rtol=1e-8, atol=1e-10)
    assert_close(B_.grad, Bt.grad.numpy(), rtol=1e-8, atol=1e-10)
