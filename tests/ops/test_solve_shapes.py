"""The shape rules of ``linalg.solve_triangular`` (B is always a matrix (*, n, k); A's and B's batch dims
broadcast, for ``left`` and ``left=False``) against ``linalg.solve`` (B may be a batch of vectors), float64
references from NumPy, gradcheck, and a torch twin over a grid of shapes (values, or the error and message)."""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import FEW, as_np, assert_close, check_grad, randn, seeds, t64

L = mt.linalg


def triangle(a: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """The matrix ``solve_triangular`` solves with: a's upper or lower triangle, ones on the diagonal if unit."""
    tri = np.triu(a) if upper else np.tril(a)
    return tri - tri * np.eye(a.shape[-1]) + np.eye(a.shape[-1]) if unit else tri


def reference(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    """X with a X = b or X a = b, b always a matrix, batch dims broadcast (NumPy 2's solve reads b as one)."""
    if not left:
        return np.swapaxes(reference(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), True), -1, -2)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))


@pytest.mark.parametrize("left", [True, False])
def test_square_b_is_a_matrix_when_the_batch_equals_n(left):
    """The defect: A (3, 3, 3) and B (3, 3) read B as 3 vectors (solve's rule), giving a wrong answer."""
    a, b = randn(0, (3, 3, 3)) + 3 * np.eye(3), randn(1, (3, 3))
    x = L.solve_triangular(t64(a, False), t64(b, False), upper=False, left=left)
    assert x.shape == (3, 3, 3)
    assert_close(x, reference(np.tril(a), b, left), rtol=1e-10, atol=1e-12)


def test_left_false_broadcasts_a_batched_b():
    a, b = randn(0, (3, 3)) + 3 * np.eye(3), randn(1, (2, 4, 3))
    x = L.solve_triangular(t64(a, False), t64(b, False), upper=True, left=False)
    assert_close(x, reference(np.triu(a), b, False), rtol=1e-10, atol=1e-12)


def test_multivariate_normal_precision_with_batch_equal_to_event_size():
    m = randn(0, (3, 3, 3))
    cov = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)
    d = mt.distributions.MultivariateNormal(mt.zeros(3, 3, dtype=mt.float64),
                                            precision_matrix=mt.tensor(np.linalg.inv(cov)))
    assert_close(d.covariance_matrix, cov, rtol=1e-9, atol=1e-12)
    x = randn(2, (3, 3))
    expected = -0.5 * (np.einsum("bi,bij,bj->b", x, np.linalg.inv(cov), x) + 3 * np.log(2 * np.pi)
                       + np.linalg.slogdet(cov)[1])
    assert_close(d.log_prob(mt.tensor(x)), expected, rtol=1e-9)


batches = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


@FEW
@given(shapes=batches, n=st.integers(1, 3), k=st.integers(1, 3), seed=seeds, upper=st.booleans(),
       left=st.booleans(), unit=st.booleans())
def test_broadcast_batches_values_and_gradients(shapes, n, k, seed, upper, left, unit):
    (batch_a, batch_b), _ = shapes
    a = randn(seed, batch_a + (n, n)) + 3 * np.eye(n)
    b = randn(seed + 1, batch_b + ((n, k) if left else (k, n)))
    x = L.solve_triangular(t64(a, False), t64(b, False), upper=upper, left=left, unitriangular=unit)
    assert_close(x, reference(triangle(a, upper, unit), b, left), rtol=1e-9, atol=1e-10)
    check_grad(lambda p, q: L.solve_triangular(p, q, upper=upper, left=left, unitriangular=unit), a, b)


def test_b_is_cast_to_a_dtype_and_errors_name_the_equation():
    x = L.solve_triangular(mt.eye(3), mt.ones(3, 2, dtype=mt.float64), upper=True)
    assert x.dtype == mt.float32
    with pytest.raises(RuntimeError, match=r"equation XA = B \(3x3 and 3x2\)"):
        L.solve_triangular(mt.eye(3), mt.ones(3, 2), upper=True, left=False)
    with pytest.raises(RuntimeError, match="at non-singleton dimension 0"):
        L.solve_triangular(mt.eye(3).expand(2, 3, 3), mt.ones(3, 3, 1), upper=True)


A_SHAPES = [(3, 3), (2, 3, 3), (1, 3, 3), (3, 3, 3), (2, 1, 3, 3), (2, 3, 3, 3)]
B_SHAPES = [(3,), (3, 3), (2, 3), (3, 2), (1, 3), (3, 1), (2, 3, 3), (2, 3, 1), (4, 3, 2), (3, 2, 3), (2, 1, 3),
            (2, 4, 3), (3, 3, 3)]


def outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """("ok", values) or ("err", the error's type name, its message)."""
    try:
        out = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return "err", type(e).__name__, str(e)
    return "ok", np.asarray(out.detach().numpy() if hasattr(out, "detach") else as_np(out))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["solve", "solve_triangular"])
def test_shape_grid_matches_torch(name):
    torch = pytest.importorskip("torch")
    for i, (sa, sb, left) in enumerate(itertools.product(A_SHAPES, B_SHAPES, [True, False])):
        a, b = randn(i, sa) + 3 * np.eye(3), randn(i + 1000, sb)
        kw: dict[str, Any] = {"left": left, **({"upper": True} if name == "solve_triangular" else {})}
        theirs = outcome(getattr(torch.linalg, name), torch.tensor(a), torch.tensor(b), **kw)
        ours = outcome(getattr(L, name), mt.tensor(a), mt.tensor(b), **kw)
        assert ours[0] == theirs[0], (sa, sb, left, ours, theirs)
        if ours[0] == "ok":
            assert ours[1].shape == theirs[1].shape, (sa, sb, left)
            np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-12)
        else:
            assert ours[1:] == theirs[1:], (sa, sb, left)


@pytest.mark.torch
def test_multivariate_normal_precision_matches_torch():
    torch = pytest.importorskip("torch")
    m = randn(0, (3, 3, 3))
    p, x = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3), randn(1, (3, 3))
    ours = mt.distributions.MultivariateNormal(mt.zeros(3, 3, dtype=mt.float64), precision_matrix=mt.tensor(p))
    theirs = torch.distributions.MultivariateNormal(torch.zeros(3, 3, dtype=torch.float64),
                                                    precision_matrix=torch.tensor(p))
    for f in (lambda d: d.covariance_matrix, lambda d: d.scale_tril, lambda d: d.entropy()):
        np.testing.assert_allclose(as_np(f(ours)), f(theirs).numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(as_np(ours.log_prob(mt.tensor(x))), theirs.log_prob(torch.tensor(x)).numpy(), rtol=1e-9)


@pytest.mark.torch
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_shapes_match_torch(upper):
    torch = pytest.importorskip("torch")
    for i, (sl, sb) in enumerate(itertools.product([(3, 3), (2, 3, 3), (3, 3, 3), (3,), (2, 3)],
                                                   [(3,), (3, 3), (2, 3), (2, 3, 3), (3, 3, 1), (4, 3, 2)])):
        f = np.tril(randn(i, sl)) + 3 * np.eye(*sl[-2:]) if len(sl) > 1 else randn(i, sl)
        f = np.swapaxes(f, -1, -2) if upper and f.ndim > 1 else f
        b = randn(i + 100, sb)
        theirs = outcome(torch.cholesky_solve, torch.tensor(b), torch.tensor(f), upper)
        ours = outcome(mt.cholesky_solve, mt.tensor(b), mt.tensor(f), upper)
        assert ours[0] == theirs[0], (sl, sb, ours, theirs)
        if ours[0] == "ok":
            np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-12)
        else:
            assert ours[1:] == theirs[1:], (sl, sb)
