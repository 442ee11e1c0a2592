"""``linalg.solve_triangular`` with a zero on the diagonal: substitution's infinities and NaNs (BLAS's trsm, no
singularity check), forward and backward, as PyTorch; ``cholesky_solve`` through it; ``cholesky_inverse``'s
LinAlgError (PyTorch's potri checks). Reference: row-by-row substitution in Python floats, written here."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt


def substitute(a: list[list[float]], b: list[float], upper: bool) -> list[float]:
    """x with a x = b by substitution: x_i = (b_i - sum_j a_ij x_j) / a_ii, IEEE division by 0."""
    n = len(b)
    x = [0.0] * n
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        s = b[i]
        for j in (range(i + 1, n) if upper else range(i)):
            s -= a[i][j] * x[j]
        x[i] = s / a[i][i] if a[i][i] != 0 else (math.copysign(math.inf, s) * math.copysign(1, a[i][i])
                                                  if s != 0 else math.nan) if not math.isnan(s) else math.nan
    return x


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(np.isposinf(a), np.isposinf(b))
                and np.array_equal(np.isneginf(a), np.isneginf(b))
                and np.allclose(np.nan_to_num(a, posinf=0, neginf=0), np.nan_to_num(b, posinf=0, neginf=0)))


@pytest.mark.parametrize("upper", [False, True])
def test_zero_diagonal_gives_infs_and_nans(upper):
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(1, 6))
        a = rng.integers(-2, 3, (n, n)).astype(float)
        a[np.diag_indices(n)] *= rng.integers(0, 2, n)
        a = np.triu(a) if upper else np.tril(a)
        b = rng.integers(-2, 3, n).astype(float)
        x = mt.linalg.solve_triangular(mt.tensor(a), mt.tensor(b[:, None]), upper=upper).numpy()[:, 0]
        assert same(x, np.array(substitute(a.tolist(), b.tolist(), upper))), (a, b, x)


def test_known_zero_pivot_values_and_gradient_without_error():
    a = mt.tensor([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, 3.0]], requires_grad=True)
    b = mt.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    x = mt.linalg.solve_triangular(a, b, upper=False)
    assert x[0, 0].item() == 1.0 and math.isnan(x[1, 0].item())  # (2 - 2 * 1) / 0 = 0 / 0
    x.sum().backward()
    assert a.grad is not None and b.grad is not None  # gB = a^-T 1: back substitution through the 0 pivot
    assert b.grad.numpy()[:2, 0].tolist() == [-math.inf, math.inf] and np.isnan(a.grad.numpy()).any()
    y = mt.cholesky_solve(mt.tensor([[1.0], [2.0]]), mt.tensor([[0.0, 0.0], [1.0, 2.0]]))
    assert y.numpy()[:, 0].tolist() == [math.inf, -math.inf]  # L y = b: y = (inf, -inf), then L^T x = y


def test_cholesky_inverse_names_the_zero_diagonal():
    low = mt.tensor([[1.0, 0, 0], [2, 0, 0], [1, 1, 3]])
    with pytest.raises(mt.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        mt.cholesky_inverse(low)
    with pytest.raises(mt.linalg.LinAlgError, match=r"\(Batch element 1\): The diagonal element 2"):
        mt.cholesky_inverse(mt.stack([mt.eye(3), low]))


@pytest.mark.torch
def test_cholesky_inverse_on_device(device):
    """The zero-diagonal check reads the factor on the host, so a CUDA factor passes through it."""
    a = np.array([[4.0, 0.0], [1.0, 3.0]])
    out = mt.cholesky_inverse(mt.tensor(a, device=device))
    np.testing.assert_allclose(out.cpu().numpy(), np.linalg.inv(a @ a.T), rtol=1e-12)
    with pytest.raises(mt.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        mt.cholesky_inverse(mt.tensor([[1.0, 0.0], [1.0, 0.0]], device=device))


def test_singular_triangles_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    for _ in range(150):
        n, k = int(rng.integers(1, 9)), int(rng.integers(1, 4))
        upper, left, unit = (bool(v) for v in rng.integers(0, 2, 3))
        a = rng.integers(-2, 3, (2, n, n)).astype(float)
        a[:, np.arange(n), np.arange(n)] *= rng.integers(0, 2, (2, n))
        b = rng.integers(-2, 3, (2, n, k) if left else (2, k, n)).astype(float)
        results = []
        for lib in (torch, mt):
            ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            x = lib.linalg.solve_triangular(ta, tb, upper=upper, left=left, unitriangular=unit)
            x.backward(lib.ones_like(x))
            results.append((x.detach().numpy(), ta.grad.numpy(), tb.grad.numpy()))
        for theirs, ours in zip(*results):
            assert same(ours, theirs), (a, b, upper, left, unit)
    low = np.array([[1.0, 0, 0], [2, 0, 0], [1, 1, 3]])
    with pytest.raises(RuntimeError) as theirs:
        torch.cholesky_inverse(torch.tensor(low))
    with pytest.raises(mt.linalg.LinAlgError, match=str(theirs.value).split(": ", 1)[1][:40]):
        mt.cholesky_inverse(mt.tensor(low))
