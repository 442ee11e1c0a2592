"""linalg.tensorsolve, linalg.tensorinv and linalg.vander against NumPy's float64 tensorsolve, tensorinv and
vander, their gradients against finite differences (gradcheck), PyTorch's errors, and PyTorch itself
(marked torch)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd.gradcheck import gradcheck

RNG = np.random.default_rng(0)


def t64(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def well_conditioned(shape, split):
    """A random tensor whose (prod shape[:split], prod shape[split:]) matrix is the identity plus noise."""
    n = int(np.prod(shape[:split]))
    return (np.eye(n) * 3 + RNG.standard_normal((n, n))).reshape(shape)


@pytest.mark.parametrize("a_shape,b_shape,dims", [
    ((2, 3, 6), (2, 3), None), ((6, 2, 3), (6,), None), ((2, 6, 3), (6,), (0,)), ((2, 3, 3, 2), (3, 2), (0, 2)),
    ((4, 4), (4,), None),
])
def test_tensorsolve_matches_numpy_and_its_gradient_is_finite_differences(a_shape, b_shape, dims):
    a = well_conditioned(a_shape, len(b_shape)) if dims is None else RNG.standard_normal(a_shape) + 0.0
    if dims is not None:  # make the moved matrix well conditioned instead
        moved = np.moveaxis(a, dims, list(range(a.ndim - len(dims), a.ndim)))
        moved = well_conditioned(moved.shape, len(b_shape))
        a = np.moveaxis(moved, list(range(a.ndim - len(dims), a.ndim)), dims)
    b = RNG.standard_normal(b_shape)
    x = mt.linalg.tensorsolve(t64(a), t64(b), dims=dims)
    np.testing.assert_allclose(x.numpy(), np.linalg.tensorsolve(a, b, axes=dims), rtol=1e-12, atol=1e-12)
    moved = a if dims is None else np.moveaxis(a, dims, list(range(a.ndim - len(dims), a.ndim)))
    np.testing.assert_allclose(np.tensordot(moved, x.numpy(), x.dim()), b, atol=1e-12)
    assert gradcheck(lambda A, B: mt.linalg.tensorsolve(A, B, dims=dims), (t64(a, True), t64(b, True)))


@pytest.mark.parametrize("shape,ind", [((4, 6, 8, 3), 2), ((6, 2, 3), 1), ((2, 3, 6), 2), ((5, 5), 1)])
def test_tensorinv_matches_numpy_and_its_gradient_is_finite_differences(shape, ind):
    a = well_conditioned(shape, ind)
    got = mt.linalg.tensorinv(t64(a), ind=ind)
    np.testing.assert_allclose(got.numpy(), np.linalg.tensorinv(a, ind=ind), rtol=1e-12, atol=1e-12)
    assert tuple(got.shape) == shape[ind:] + shape[:ind]
    identity = np.tensordot(got.numpy(), a, ind)
    np.testing.assert_allclose(identity.reshape(int(np.prod(shape[ind:])), -1), np.eye(int(np.prod(shape[ind:]))),
                               atol=1e-12)
    if np.prod(shape) <= 40:
        assert gradcheck(lambda A: mt.linalg.tensorinv(A, ind=ind), (t64(a, True),))


def test_tensor_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match=r"strictly positive integer for 'ind', but got 0"):
        mt.linalg.tensorinv(mt.ones(2, 3, 6), ind=0)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\), "
                                           r"but got 18 != 2"):
        mt.linalg.tensorinv(mt.ones(2, 3, 6), ind=1)
    with pytest.raises(RuntimeError, match=r"prod\(self.shape\[other.ndim:\]\) == prod\(self.shape\[:other.ndim\]\), "
                                           r"but got 12 != 2"):
        mt.linalg.tensorsolve(mt.ones(2, 3, 4), mt.ones(2))
    with pytest.raises(mt.linalg.LinAlgError):
        mt.linalg.tensorinv(mt.zeros(2, 2, 4))


@pytest.mark.parametrize("shape,N", [((5,), None), ((5,), 3), ((2, 3), 4), ((), 3), ((0,), 2), ((2, 0), 3)])
def test_linalg_vander_matches_numpy(shape, N):
    x = RNG.standard_normal(shape)
    got = mt.linalg.vander(t64(x), N=N)
    n = N if N is not None else shape[-1]
    flat = x.reshape(-1)
    want = np.vander(flat, n, increasing=True).reshape(*(shape or (1,)), n)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    ints = mt.linalg.vander(mt.tensor([1, 2, 3]))
    assert ints.dtype == mt.int64 and ints.tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]


def test_linalg_vander_gradient_including_zero():
    """d/dx sum_j x^j = sum_j j x^(j-1): 1 at x = 0 (no 0 * x^-1), by finite differences elsewhere."""
    x = t64([0.0, -1.5, 0.7, 2.0], grad=True)
    mt.linalg.vander(x, N=4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 + 2 * v + 3 * v * v for v in (0.0, -1.5, 0.7, 2.0)], rtol=1e-14)
    assert gradcheck(lambda v: mt.linalg.vander(v, N=5), (t64(RNG.standard_normal((2, 3)), True),))


def test_linalg_vander_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        mt.linalg.vander(mt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        mt.linalg.vander(mt.tensor(2.0))  # a 0-d x is one point
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        mt.linalg.vander(mt.tensor([1.0, 2.0]), N=1)
    with pytest.raises(RuntimeError, match="but got Bool"):
        mt.linalg.vander(mt.tensor([True, False]))


@pytest.mark.torch
def test_match_pytorch_values_and_gradients():
    torch = pytest.importorskip("torch")
    a, b = well_conditioned((2, 3, 3, 2), 2), RNG.standard_normal((2, 3))
    c = well_conditioned((4, 6, 8, 3), 2)
    x = RNG.standard_normal((2, 3))
    cases = [
        (lambda L, A, B: L.linalg.tensorsolve(A, B), (a, b)),
        (lambda L, A, B: L.linalg.tensorsolve(A, B, dims=(0, 2)), (a, b.T)),
        (lambda L, A: L.linalg.tensorinv(A, ind=2), (c,)),
        (lambda L, X: L.linalg.vander(X, N=4), (x,)),
        (lambda L, X: L.linalg.vander(X), (x,)),
    ]
    for f, args in cases:
        ours = [t64(v, True) for v in args]
        theirs = [torch.tensor(v, requires_grad=True) for v in args]
        y, ty = f(mt, *ours), f(torch, *theirs)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
        w = RNG.standard_normal(tuple(ty.shape))
        (y * t64(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-11)
    for f in (lambda L: L.linalg.tensorinv(L.ones(2, 3, 6), ind=1), lambda L: L.linalg.tensorsolve(L.ones(2, 3, 4),
                                                                                                   L.ones(2)),
              lambda L: L.linalg.vander(L.tensor([True])), lambda L: L.linalg.vander(L.tensor(1.0))):
        messages = []
        for lib in (mt, torch):
            with pytest.raises(RuntimeError) as info:
                f(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
