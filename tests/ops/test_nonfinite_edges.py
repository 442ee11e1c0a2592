"""Results at NaN and inf that once differed silently from PyTorch's (issue 25, item 10): forward values,
gradients, and inputs PyTorch refuses (a single tensor where a sequence is expected, a one-value group)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.linalg import LinAlgError

NAN, INF = math.nan, math.inf

# (name, f(lib, functional, x)); x = [nan, 1, -1, 0]; the expected gradient is PyTorch's.
GRADIENT_AT_NAN = [
    ("relu", lambda t, f, x: f.relu(x), [1.0, 1.0, 0.0, 0.0]),
    ("relu6", lambda t, f, x: f.relu6(x), [1.0, 1.0, 0.0, 0.0]),
    ("hardtanh", lambda t, f, x: f.hardtanh(x), [1.0, 0.0, 0.0, 1.0]),
    ("elu", lambda t, f, x: f.elu(x), [1.0, 1.0, math.exp(-1), 1.0]),
    ("celu", lambda t, f, x: f.celu(x), [1.0, 1.0, math.exp(-1), 1.0]),
    ("selu", lambda t, f, x: f.selu(x), [1.0507009873554805, 1.0507009873554805, 0.6467686, 1.7580993408473766]),
    ("threshold", lambda t, f, x: f.threshold(x, 0.5, 2.0), [1.0, 1.0, 0.0, 0.0]),
    ("softshrink", lambda t, f, x: f.softshrink(x), [1.0, 1.0, 1.0, 0.0]),
    ("abs", lambda t, f, x: t.abs(x), [0.0, 1.0, -1.0, 0.0]),
]


@pytest.mark.parametrize("name,f,expected", GRADIENT_AT_NAN, ids=[c[0] for c in GRADIENT_AT_NAN])
def test_gradient_at_nan(name, f, expected):
    x = mt.tensor([NAN, 1.0, -1.0, 0.0], requires_grad=True)
    f(mt, F, x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_nan_forward_kept():
    assert math.isnan(F.softshrink(mt.tensor([NAN])).item())
    assert math.isnan(F.threshold(mt.tensor([NAN]), 0.5, 2.0).item())


def test_logaddexp_gradient_at_inf():
    for op in (mt.logaddexp, mt.logaddexp2):
        x = mt.tensor([1.0, INF], requires_grad=True)
        op(x[0], x[1]).backward()
        assert x.grad.tolist() == [0.0, 1.0]


def test_quantile_with_minus_inf():
    x = mt.tensor([-INF, 0.3])
    assert mt.nanquantile(x, 0.7).item() == -INF
    assert mt.quantile(x, 0.7).item() == -INF
    assert mt.lerp(mt.tensor([-INF]), mt.tensor([0.3]), 0.7).item() == -INF
    assert mt.lerp(mt.tensor([1.0]), mt.tensor([3.0]), mt.tensor([1.0])).item() == 3.0


def test_cholesky_of_nan_raises():
    with pytest.raises(LinAlgError, match="not positive-definite"):
        mt.linalg.cholesky(mt.tensor([[NAN, 0.0], [0.0, 1.0]]))


@pytest.mark.parametrize("name", ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack",
                                  "dstack", "column_stack"])
def test_joining_one_tensor_is_a_type_error(name):
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        getattr(mt, name)(mt.ones(2, 3))


def test_group_norm_one_value_per_group():
    with pytest.raises(ValueError, match=r"more than 1 value per channel when training, got input size \[1, 4, 1\]"):
        F.group_norm(mt.ones(1, 4, 1), 4)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        mt.nn.GroupNorm(2, 2).eval()(mt.ones(1, 2, 1))
    assert F.group_norm(mt.ones(0, 4, 1), 4).shape == (0, 4, 1)


@pytest.mark.torch
def test_nonfinite_edges_match_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    for name, f, _ in GRADIENT_AT_NAN:
        grads = []
        for lib, fn in ((mt, F), (torch, TF)):
            x = lib.tensor([NAN, 1.0, -1.0, 0.0], requires_grad=True)
            y = f(lib, fn, x)
            y.sum().backward()
            grads.append((np.asarray(y.tolist()), x.grad.numpy()))
        for ours, theirs in zip(*grads):
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=name)
    for a, b in ((1.0, INF), (INF, 1.0), (-INF, INF), (INF, INF)):
        for op in ("logaddexp", "logaddexp2"):
            grads = []
            for lib in (mt, torch):
                x = lib.tensor([a, b], requires_grad=True)
                getattr(lib, op)(x[0], x[1]).backward()
                grads.append(x.grad.numpy())
            np.testing.assert_array_equal(*grads)
    for q in (0.3, 0.5, 0.7):
        for name in ("quantile", "nanquantile"):
            ours = getattr(mt, name)(mt.tensor([-INF, 0.3, INF]), q).item()
            theirs = getattr(torch, name)(torch.tensor([-INF, 0.3, INF]), q).item()
            np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.cholesky(torch.tensor([[NAN, 0.0], [0.0, 1.0]]))
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        torch.hstack(torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"got input size \[1, 4, 1\]"):
        TF.group_norm(torch.ones(1, 4, 1), 4)
