"""cdist, cartesian_prod, trapezoid / trapz / cumulative_trapezoid: NumPy / SciPy float64 references over
shapes, gradients by gradcheck (and PyTorch's subgradients at zero distance and ties by known values),
PyTorch's errors, and parity with PyTorch where it is installed."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import integrate

import minitensor as mt

from helpers import SETTINGS, assert_close, check_grad, nonscalar_shapes, randn, seeds, t64

PS = [0.0, 0.5, 1.0, 2.0, 3.0, math.inf]
MODES = ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]


def ref_cdist(a, b, p):
    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(np.float64)
    if p == math.inf:
        return diff.max(-1) if diff.shape[-1] else np.zeros(diff.shape[:-1])
    return (diff ** p).sum(-1) ** (1 / p)


batches = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3)


@SETTINGS
@given(batch=batches, rows=st.tuples(st.integers(0, 4), st.integers(0, 4)), m=st.integers(0, 4), seed=seeds,
       p=st.sampled_from(PS), mode=st.sampled_from(MODES))
def test_cdist_matches_numpy(batch, rows, m, seed, p, mode):
    (b1, b2), _ = batch
    a, b = randn(seed, b1 + (rows[0], m)), randn(seed + 1, b2 + (rows[1], m))
    got = mt.cdist(mt.tensor(a), mt.tensor(b), p, mode)
    exact = p != 2 or mode != MODES[1]  # the matmul form loses digits when rows are close
    assert_close(got, ref_cdist(a, b, p), rtol=1e-12 if exact else 1e-6, atol=1e-12 if exact else 1e-6)
    assert got.dtype is mt.float64
    assert mt.cdist(mt.tensor(a, dtype=mt.float32), mt.tensor(b, dtype=mt.float32), p).dtype is mt.float32


@SETTINGS
@given(batch=batches, rows=st.tuples(st.integers(1, 3), st.integers(1, 3)), m=st.integers(1, 3), seed=seeds,
       p=st.sampled_from(PS), mode=st.sampled_from(MODES))
def test_cdist_gradients(batch, rows, m, seed, p, mode):
    (b1, b2), _ = batch
    # well separated coordinates: no two differences tie (inf) and none is near 0 (p < 1)
    a = randn(seed, b1 + (rows[0], m)) + np.arange(rows[0] * m).reshape(rows[0], m) * 3.7
    b = randn(seed + 1, b2 + (rows[1], m)) * 0.3 - 50.0
    check_grad(lambda x, y: mt.cdist(x, y, p, mode), a, b)


def test_cdist_subgradients_at_zero_distance_and_ties_as_pytorch():
    x = mt.tensor([[0.0, 0.0], [1.0, 1.0]], requires_grad=True)
    y = mt.tensor([[0.0, 0.0], [1.0, 0.0]], requires_grad=True)
    expected = {0.5: ([[-1, 0], [2, 3]], [[-2, -2], [1, -1]]), 1.0: ([[-1, 0], [1, 2]], [[-1, -1], [1, -1]]),
                math.inf: ([[-1, 0], [1, 2]], [[-1, -1], [1, -1]]),
                0.0: ([[0, 0], [0, 0]], [[0, 0], [0, 0]])}  # PyTorch's values
    for p, (gx, gy) in expected.items():
        x.grad = y.grad = None
        mt.cdist(x, y, p).sum().backward()
        assert x.grad.tolist() == gx and y.grad.tolist() == gy
    for mode in MODES:  # p = 2: no nan at the zero distance
        z = mt.randn(30, 3, requires_grad=True)
        mt.cdist(z, z, compute_mode=mode).sum().backward()
        assert not z.grad.isnan().any().item()
    assert mt.cdist(mt.ones(2, 0), mt.ones(3, 0)).tolist() == [[0.0] * 3] * 2


@pytest.mark.parametrize("call, error, message", [
    (lambda: mt.cdist(mt.ones(3), mt.ones(2, 3)), RuntimeError, "cdist only supports at least 2D tensors, X1 got: 1D"),
    (lambda: mt.cdist(mt.ones(2, 3), mt.ones(3)), RuntimeError, "X2 got: 1D"),
    (lambda: mt.cdist(mt.ones(2, 3), mt.ones(2, 4)), RuntimeError,
     "X1 and X2 must have the same number of columns. X1: 3 X2: 4"),
    (lambda: mt.cdist(mt.ones(2, 3), mt.ones(2, 3), p=-1), RuntimeError, "cdist only supports non-negative p values"),
    (lambda: mt.cdist(mt.ones(2, 3, dtype=mt.int64), mt.ones(2, 3)), RuntimeError,
     "cdist only supports floating-point dtypes, X1 got: Long"),
    (lambda: mt.cdist(mt.ones(2, 3), mt.ones(2, 3, dtype=mt.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: mt.cdist(mt.ones(2, 3), mt.ones(2, 3), compute_mode="foo"), ValueError,
     "foo is not a valid value for compute_mode"),
    (lambda: mt.cdist(mt.ones(2, 1, 3), mt.ones(4, 2, 3)), RuntimeError,
     r"size of tensor a \(2\) must match the size of tensor b \(4\) at non-singleton dimension 0"),
    (lambda: mt.cartesian_prod(), RuntimeError, "meshgrid expects a non-empty TensorList"),
    (lambda: mt.cartesian_prod(mt.ones(2, 2)), RuntimeError, r"Expect a 1D vector, but got shape \[2, 2\]"),
    (lambda: mt.cartesian_prod(mt.tensor([1, 2]), mt.tensor([1.0])), RuntimeError, "same dtype"),
    (lambda: mt.trapezoid(mt.tensor([1.0, 2, 4]), mt.tensor([0.0, 1])), RuntimeError,
     "trapezoid: There must be one `x` value for each sample point"),
    (lambda: mt.trapezoid(mt.ones(2, 3), mt.tensor([0.0, 1, 3]), dim=0), RuntimeError, "one `x` value"),
    (lambda: mt.trapezoid(mt.ones(3), mt.ones(3), dx=1.0), TypeError, "invalid combination of arguments"),
    (lambda: mt.trapezoid(mt.ones(3), 2.0), TypeError, "invalid combination of arguments"),
    (lambda: mt.trapezoid(mt.tensor(1.0)), IndexError, "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: mt.cumulative_trapezoid(mt.ones(3), dim=1), IndexError, "Dimension out of range"),
])
def test_errors_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call()


@SETTINGS
@given(sizes=st.lists(st.integers(0, 3), min_size=1, max_size=4), seed=seeds)
def test_cartesian_prod_is_itertools_product(sizes, seed):
    arrays = [randn(seed + i, (n,)) for i, n in enumerate(sizes)]
    got = mt.cartesian_prod(*[mt.tensor(a) for a in arrays])
    expected = np.array(list(itertools.product(*arrays)), dtype=np.float64).reshape(-1, len(sizes))
    assert_close(got, expected[:, 0] if len(sizes) == 1 else expected, rtol=0, atol=0)
    if all(sizes):
        weights = randn(seed, tuple(got.shape))
        check_grad(lambda *ts: (mt.cartesian_prod(*ts) * mt.tensor(weights)).sum(), *arrays)
    assert mt.cartesian_prod(mt.tensor([1, 2]), mt.tensor([3, 4, 5])).tolist() == \
        [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]]


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_trapezoid_and_cumulative_trapezoid_match_numpy(shape, seed, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    axis = dim % len(shape)
    y = randn(seed, shape)
    spacing = data.draw(st.sampled_from(["none", "dx", "x1d", "xfull"]))
    x = dx = None
    if spacing == "dx":
        dx = data.draw(st.floats(-3, 3, allow_nan=False))
    elif spacing == "x1d":
        x = np.cumsum(np.abs(randn(seed + 1, (shape[axis],))))
    elif spacing == "xfull":
        x = randn(seed + 1, shape)
    kw = {"dx": dx} if dx is not None else {}
    xt = None if x is None else mt.tensor(x)
    expected = np.trapezoid(y, x=x, dx=1.0 if dx is None else dx, axis=axis)
    assert_close(mt.trapezoid(mt.tensor(y), xt, dim=dim, **kw), expected, rtol=1e-10, atol=1e-12)
    assert_close(mt.trapz(mt.tensor(y), xt, dim=dim, **kw), expected, rtol=1e-10, atol=1e-12)
    running = integrate.cumulative_trapezoid(y, x=x, dx=1.0 if dx is None else dx, axis=axis)
    assert_close(mt.cumulative_trapezoid(mt.tensor(y), xt, dim=dim, **kw), running, rtol=1e-10, atol=1e-12)
    if x is None:
        check_grad(lambda t: mt.trapezoid(t, dim=dim, **kw), y)
        check_grad(lambda t: mt.cumulative_trapezoid(t, dim=dim, **kw), y)
    else:
        check_grad(lambda t, u: mt.trapezoid(t, u, dim=dim), y, x)
        check_grad(lambda t, u: mt.cumulative_trapezoid(t, u, dim=dim), y, x)


def test_trapezoid_dtypes_and_empty():
    assert mt.trapezoid(mt.tensor([1, 2, 4])).dtype is mt.float32
    assert mt.trapezoid(mt.tensor([1, 2, 4])).item() == 4.5
    assert mt.trapezoid(mt.tensor([1.0, 2, 4], dtype=mt.float64), mt.tensor([0, 1, 3])).dtype is mt.float64
    assert mt.trapezoid(mt.ones(2, 0), dim=1).tolist() == [0.0, 0.0]
    assert mt.trapezoid(mt.ones(2, 0), dim=0).shape == (0,)
    assert mt.cumulative_trapezoid(mt.tensor([1.0])).shape == (0,)
    assert mt.trapezoid(mt.tensor([1.0, 2, 4]), dx=2.0).item() == 9.0


@pytest.mark.torch
def test_distances_match_pytorch():
    torch = pytest.importorskip("torch")
    a, b = randn(0, (2, 30, 4)), randn(1, (1, 5, 4))
    a[0, 3] = b[0, 2]  # a zero distance
    for p in PS:
        for mode in MODES:
            x, y = t64(a), t64(b)
            tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
            ours, theirs = mt.cdist(x, y, p, mode), torch.cdist(tx, ty, p, mode)
            assert_close(ours, theirs.detach().numpy(), rtol=1e-7, atol=1e-7)
            w = randn(2, tuple(ours.shape))
            (ours * mt.tensor(w)).sum().backward()
            (theirs * torch.tensor(w)).sum().backward()
            assert_close(x.grad, tx.grad.numpy(), rtol=1e-6, atol=1e-6)
            assert_close(y.grad, ty.grad.numpy(), rtol=1e-6, atol=1e-6)
    u, v = randn(3, (3,)), randn(4, (2,))
    assert_close(mt.cartesian_prod(mt.tensor(u), mt.tensor(v)),
                 torch.cartesian_prod(torch.tensor(u), torch.tensor(v)).numpy(), rtol=0, atol=0)
    y, x = randn(5, (3, 6)), np.sort(randn(6, (6,)))
    for fn in ("trapezoid", "cumulative_trapezoid"):
        ours, theirs = t64(y), torch.tensor(y, requires_grad=True)
        got, want = getattr(mt, fn)(ours, mt.tensor(x)), getattr(torch, fn)(theirs, torch.tensor(x))
        assert_close(got, want.detach().numpy(), rtol=1e-12, atol=1e-12)
        got.sum().backward()
        want.sum().backward()
        assert_close(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-12)
        assert_close(getattr(mt, fn)(mt.tensor(y), dx=0.5, dim=0),
                     getattr(torch, fn)(torch.tensor(y), dx=0.5, dim=0).numpy(), rtol=1e-12, atol=1e-12)
