"""linalg.inv_ex / cholesky_ex / solve_ex: results and gradients as inv / cholesky / solve where every matrix
succeeds, LAPACK's info (int32, batch-shaped) and no error where one fails, PyTorch's errors with
check_errors; linalg.eig / eigvals refuse (no complex dtypes). Torch parity where torch is installed."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

from helpers import as_np, assert_close, check_grad, randn, t64

L = mt.linalg
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def spd(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    a = randn(seed, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def test_ex_forms_match_the_checked_ones_with_gradients():
    a, b, s = randn(0, (2, 3, 3)) + 3 * np.eye(3), randn(1, (2, 3, 2)), spd(2, (2, 3, 3))
    inverse, info = L.inv_ex(t64(a, False))
    assert_close(inverse, np.linalg.inv(a), rtol=1e-10)
    assert info.dtype == mt.int32 and as_np(info).tolist() == [0, 0]
    result, info = L.solve_ex(t64(a, False), t64(b, False))
    assert_close(result, np.linalg.solve(a, b), rtol=1e-10)
    assert as_np(info).tolist() == [0, 0]
    for upper in (False, True):
        factor, info = L.cholesky_ex(t64(s, False), upper=upper)
        ref = np.linalg.cholesky(s)
        assert_close(factor, np.swapaxes(ref, -1, -2) if upper else ref, rtol=1e-10)
        assert as_np(info).tolist() == [0, 0]
        check_grad(lambda x: L.cholesky_ex((x + x.mT) / 2, upper=upper).L, s)  # as cholesky: A symmetric
    check_grad(lambda x: L.inv_ex(x).inverse, a)
    check_grad(lambda x, y: L.solve_ex(x, y).result, a, b)
    check_grad(lambda x, y: L.solve_ex(x, y, left=False).result, a, np.swapaxes(b, -1, -2))
    v = randn(3, (2, 3))  # a batch of vectors, as solve
    assert_close(L.solve_ex(t64(a, False), t64(v, False)).result, np.linalg.solve(a, v[..., None])[..., 0],
                 rtol=1e-10)
    assert type(L.inv_ex(t64(a, False))).__name__ == "linalg_inv_ex"
    assert L.cholesky_ex(t64(s, False)).__match_args__ == ("L", "info")
    assert L.solve_ex(t64(a, False), t64(b, False)).__match_args__ == ("result", "info")


def test_failures_give_info_not_errors():
    a = np.stack([np.eye(2), SINGULAR])
    inverse, info = L.inv_ex(mt.tensor(a))
    assert as_np(info).tolist() == [0, 2]
    assert_close(inverse[0], np.eye(2))
    assert not np.isfinite(as_np(inverse[1])).all()
    result, info = L.solve_ex(mt.tensor(a), mt.ones(2, 2, dtype=mt.float64))
    assert as_np(info).tolist() == [0, 2]
    assert_close(result[0], np.ones(2))
    assert not np.isfinite(as_np(result[1])).all()
    c = np.stack([np.eye(2), SINGULAR, -np.eye(2)])
    factor, info = L.cholesky_ex(mt.tensor(c))
    assert as_np(info).tolist() == [0, 2, 1]
    assert_close(factor[:2], [np.eye(2), [[1.0, 0.0], [2.0, 0.0]]])  # potf2's leftovers, as LAPACK's


def test_check_errors_raise_pytorch_errors():
    a = np.stack([np.eye(2), SINGULAR])
    with pytest.raises(L.LinAlgError, match=r"linalg.inv_ex: \(Batch element 1\): The diagonal element 2 is zero, "
                                            "the inversion could not be completed because the input matrix is "
                                            "singular."):
        L.inv_ex(mt.tensor(a), check_errors=True)
    with pytest.raises(L.LinAlgError, match=r"^linalg.inv_ex: The diagonal element 2 is zero"):
        L.inv_ex(mt.tensor(SINGULAR), check_errors=True)
    with pytest.raises(L.LinAlgError, match=r"torch.linalg.solve_ex: \(Batch element 1\): The solver failed because "
                                            "the input matrix is singular."):
        L.solve_ex(mt.tensor(a), mt.ones(2, 2, dtype=mt.float64), check_errors=True)
    with pytest.raises(L.LinAlgError, match=r"linalg.cholesky_ex: \(Batch element 1\): The factorization could not "
                                            r"be completed because the input is not positive-definite \(the leading "
                                            r"minor of order 2 is not positive-definite\)."):
        L.cholesky_ex(mt.tensor(a), check_errors=True)
    with pytest.raises(RuntimeError, match="linalg.inv_ex: A must be batches of square matrices"):
        L.inv_ex(mt.ones(2, 3))
    with pytest.raises(RuntimeError, match="linalg.cholesky_ex: The input tensor A must have at least 2 dimensions"):
        L.cholesky_ex(mt.ones(3))


def test_eig_and_eigvals_refuse_for_want_of_complex_dtypes():
    for f in (L.eig, L.eigvals):
        with pytest.raises(NotImplementedError, match="complex.*no complex dtypes"):
            f(mt.ones(2, 2))


def test_ex_forms_on_device(device):
    a = np.stack([np.eye(2) * 2, SINGULAR])
    A = mt.tensor(a, device=device)
    assert as_np(L.inv_ex(A).info.cpu()).tolist() == [0, 2]
    assert as_np(L.solve_ex(A, mt.ones(2, 2, dtype=mt.float64, device=device)).info.cpu()).tolist() == [0, 2]
    assert as_np(L.cholesky_ex(A).info.cpu()).tolist() == [0, 2]
    assert_close(L.inv_ex(A).inverse[0].cpu(), np.eye(2) / 2)


@pytest.mark.torch
def test_ex_forms_match_torch():
    torch = pytest.importorskip("torch")
    a = np.stack([np.eye(2), SINGULAR, 2 * np.eye(2)])
    for mine, theirs in ((L.inv_ex(mt.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))),
                         (L.solve_ex(mt.tensor(a), mt.ones(2, 2, dtype=mt.float64)),
                          torch.linalg.solve_ex(torch.tensor(a), torch.ones(2, 2, dtype=torch.float64))),
                         (L.cholesky_ex(mt.tensor(a)), torch.linalg.cholesky_ex(torch.tensor(a)))):
        np.testing.assert_array_equal(as_np(mine[1]), theirs[1].numpy())
        np.testing.assert_array_equal(as_np(mine[0]), theirs[0].numpy())  # inf / nan where they fail too


def test_cpu_autocast_float32_list():
    """As PyTorch's CPU autocast: inv_ex, cholesky_ex, householder_product and geqrf run a bfloat16 matrix in
    float32; lu_factor and solve_ex are not on the list and refuse it; matrix_exp keeps the dtype."""
    x = mt.tensor(randn(0, (3, 3)) + 3 * np.eye(3)).bfloat16()
    with mt.autocast("cpu", dtype=mt.bfloat16):
        assert L.inv_ex(x).inverse.dtype == mt.float32
        assert L.cholesky_ex(x @ x.mT).L.dtype == mt.float32
        assert L.householder_product(x, x[0]).dtype == mt.float32
        assert mt.geqrf(x).a.dtype == mt.float32
        assert L.matrix_exp(x).dtype == mt.bfloat16
        with pytest.raises(NotImplementedError, match="\"lu_cpu\" not implemented for 'BFloat16'"):
            L.lu_factor(x)
        with pytest.raises(RuntimeError, match="Low precision dtypes not supported"):
            L.solve_ex(x, x)


def test_cholesky_ex_backward_through_a_failed_factor_does_not_raise():
    """As PyTorch's: the failed matrix's gradient is inf / NaN, the others' are cholesky's."""
    A = t64(np.stack([2 * np.eye(2), SINGULAR]))
    L.cholesky_ex(A).L.sum().backward()
    ref = t64(2 * np.eye(2))
    L.cholesky(ref).sum().backward()
    assert_close(A.grad[0], as_np(ref.grad))
    assert not np.isfinite(as_np(A.grad[1])).all()
