"""multilabel_margin_loss and nn.MultiLabelMarginLoss: values against a float64 NumPy loop reference written
here (PyTorch's definition), gradients by finite differences and at the kinks, PyTorch's shapes and errors;
the tests marked ``torch`` compare values and gradients with PyTorch itself."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

REDUCTIONS = ["mean", "sum", "none"]


def f64(a, requires_grad=False):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=mt.float64, requires_grad=requires_grad)


def reference(x, y):
    """(N,) losses by loops: for each label j before the first -1 and each class i not among those labels,
    max(0, 1 - x[j] + x[i]); the sum over (j, i) divided by C."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    out = np.zeros(x.shape[0])
    for n in range(x.shape[0]):
        labels = []
        for j in y[n]:
            if j < 0:
                break
            labels.append(j)
        for j in labels:
            for i in range(x.shape[1]):
                if i not in labels:
                    out[n] += max(0.0, 1 - x[n, j] + x[n, i])
    return out / x.shape[1]


def targets(rng, n, c):
    """(n, c) labels: a random count of (possibly repeated) labels, then -1, then anything in [-1, c)."""
    y = rng.integers(-1, c, (n, c))
    for row in y:
        k = rng.integers(0, c + 1)
        if k < c:
            row[k] = -1
    return y


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 4), c=st.integers(1, 5), reduction=st.sampled_from(REDUCTIONS))
def test_matches_the_loop_reference_and_finite_differences(seed, n, c, reduction):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((n, c)), targets(rng, n, c)
    losses = reference(x, y)
    want = losses.mean() if reduction == "mean" else losses.sum() if reduction == "sum" else losses
    xt = f64(x, True)
    out = F.multilabel_margin_loss(xt, mt.tensor(y), reduction=reduction)
    assert out.dtype == mt.float64 and tuple(out.shape) == np.shape(want)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-14)
    assert gradcheck(lambda t: F.multilabel_margin_loss(t, mt.tensor(y), reduction=reduction), [xt])


def test_gradient_at_the_kink_is_zero_and_repeated_labels_count_twice():
    x = f64([[1.0, 0.0, 0.5]], True)  # label 0: class 1 sits exactly at the margin (z = 0), class 2 inside it
    F.multilabel_margin_loss(x, mt.tensor([[0, -1, -1]]), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-1 / 3, 0.0, 1 / 3]])
    x = f64([[0.2, 0.1, -0.3]], True)
    once = F.multilabel_margin_loss(x, mt.tensor([[1, -1, 2]]))
    twice = F.multilabel_margin_loss(x, mt.tensor([[1, 1, -1]]))
    assert twice.item() == pytest.approx(2 * once.item())
    assert once.item() == pytest.approx(reference(x.detach().numpy(), [[1, -1, 2]])[0])


def test_shapes_of_one_sample_and_of_an_empty_batch():
    x, y = f64([0.2, 1.0, -0.5], True), mt.tensor([2, 0, -1])
    for reduction in REDUCTIONS:  # a 1-D target gives a 0-d loss, 'none' too (PyTorch's special case)
        out = F.multilabel_margin_loss(x, y, reduction=reduction)
        assert out.shape == () and out.item() == pytest.approx(reference(x.detach().numpy(), [2, 0, -1])[0])
    assert F.multilabel_margin_loss(f64(3.0), mt.tensor([0]), reduction="none").item() == 0.0
    assert F.multilabel_margin_loss(f64(3.0), mt.tensor(-1), reduction="none").item() == 0.0
    empty = mt.zeros(0, 3), mt.zeros(0, 3, dtype=mt.int64)
    assert F.multilabel_margin_loss(*empty, reduction="none").shape == (0,)
    assert F.multilabel_margin_loss(*empty, reduction="sum").item() == 0.0


def test_module_and_legacy_reduction_flags():
    x, y = f64([[0.1, 0.2, 0.4], [0.3, -0.2, 0.5]]), mt.tensor([[2, 0, -1], [1, -1, 0]])
    assert mt.nn.MultiLabelMarginLoss()(x, y).item() == pytest.approx(reference(x.numpy(), y.numpy()).mean())
    assert mt.nn.MultiLabelMarginLoss(reduction="none")(x, y).shape == (2,)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        module = mt.nn.MultiLabelMarginLoss(size_average=False)
    assert module(x, y).item() == pytest.approx(reference(x.numpy(), y.numpy()).sum())
    assert F.multilabel_margin_loss(x, y, reduce=False).shape == (2,)
    assert F.multilabel_margin_loss(x, y, size_average=False).item() == pytest.approx(module(x, y).item())


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.multilabel_margin_loss(mt.randn(2, 4), mt.tensor([[3, 0, -1]] * 2)), RuntimeError,
     r"inconsistent target size: \[2, 3\] for input of size: \[2, 4\]"),
    (lambda: F.multilabel_margin_loss(mt.randn(4), mt.tensor([[3, 0, -1, 1]] * 2)), RuntimeError,
     r"inconsistent target size: \[2, 4\] for input of size: \[4\]"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 3), mt.tensor([[3, 0, -1]] * 2)), RuntimeError, "out of range"),
    (lambda: F.multilabel_margin_loss(mt.randn(1, 3), mt.tensor([[1, -1, -2]])), RuntimeError, "out of range"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 0), mt.zeros(2, 0, dtype=mt.int64)), RuntimeError,
     r"non-empty vector or matrix .* \[2, 0\]"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 3, 1), mt.zeros(2, 3, 1, dtype=mt.int64)), RuntimeError,
     "non-empty vector or matrix"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 3), mt.zeros(2, 3, dtype=mt.int32)), RuntimeError,
     "expected scalar type Long but found Int"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 3), mt.zeros(2, 3)), RuntimeError, "Long but found Float"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 3).half(), mt.zeros(2, 3, dtype=mt.int64)), NotImplementedError,
     "not implemented for 'Half'"),
    (lambda: F.multilabel_margin_loss(mt.ones(2, 3, dtype=mt.int64), mt.zeros(2, 3, dtype=mt.int64)),
     NotImplementedError, "not implemented for 'Long'"),
    (lambda: F.multilabel_margin_loss(mt.randn(2, 3), mt.zeros(2, 3, dtype=mt.int64), reduction="x"), ValueError,
     "not a valid value"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_autocast_runs_it_in_float32():
    x = mt.randn(2, 3).to(mt.bfloat16)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        assert F.multilabel_margin_loss(x, mt.tensor([[0, -1, 1], [2, 1, 0]])).dtype == mt.float32


@pytest.mark.torch
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5, 6), (6,), (1, 1), ()])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_gradients_match_pytorch(reduction, shape, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(shape) + 7)
    n, c = (shape[0] if len(shape) == 2 else 1), (shape[-1] if shape else 1)
    x = (rng.standard_normal((n, c)) * 0.5).round(1).reshape(shape).astype(dtype)  # rounded: some z hit 0
    y = targets(rng, n, c).reshape(shape)
    w = rng.standard_normal(() if len(shape) < 2 or reduction != "none" else (n,))
    results = []
    for lib, fn in ((torch, torch.nn.functional.multilabel_margin_loss), (mt, F.multilabel_margin_loss)):
        xt = lib.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(xt, lib.tensor(y), reduction=reduction)
        (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
        results.append((out.detach().numpy(), xt.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_grad, want_grad, rtol=tol, atol=tol)


@pytest.mark.torch
def test_module_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 5)), targets(rng, 4, 5)
    want = torch.nn.MultiLabelMarginLoss(reduction="sum")(torch.tensor(x), torch.tensor(y))
    got = mt.nn.MultiLabelMarginLoss(reduction="sum")(mt.tensor(x), mt.tensor(y))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_on_each_device(device):
    """The composed ops on the device (CuPy on CUDA) against the CPU's float64 values and gradients."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((4, 5)), targets(rng, 4, 5)
    results = []
    for dev in (mt.device("cpu"), device):
        xt = mt.tensor(x, device=dev, requires_grad=True)
        out = F.multilabel_margin_loss(xt, mt.tensor(y, device=dev), reduction="sum")
        out.backward()
        results.append((out.item(), xt.grad.cpu().numpy()))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)
