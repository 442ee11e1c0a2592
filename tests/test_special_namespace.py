"""minitensor.special: PyTorch's torch.special names; entr, ndtr and ndtri against SciPy (a dependency) in
float64, their gradients by finite differences, and parity with torch."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor import special
from minitensor.testing import gradcheck

F64 = mt.float64


def test_names_are_the_existing_functions():
    assert special.expit is mt.sigmoid and special.erf is mt.erf and special.erfinv is mt.erfinv
    assert special.logsumexp is mt.logsumexp and special.softmax is mt.softmax and special.round is mt.round
    assert set(special.__all__) >= {"entr", "ndtr", "ndtri", "expit", "exp2", "expm1", "log1p", "log_softmax", "erfc"}
    assert not hasattr(mt, "entr") and not hasattr(mt, "ndtri")  # torch.special only, as in PyTorch


def test_entr_values_and_edges():
    x = mt.tensor([-1.0, 0.0, -0.0, 0.5, 1.0, 2.0, float("nan"), float("inf")], dtype=F64)
    got = special.entr(x).numpy()
    assert np.array_equal(got, sp.entr(x.numpy()), equal_nan=True)
    assert got[1] == 0 and not np.signbit(got[2]) and got[0] == -np.inf
    assert special.entr(mt.tensor([0, 1, 2])).dtype == mt.float32  # integers give the default float dtype
    assert special.entr(mt.tensor([0.5], dtype=mt.bfloat16)).dtype == mt.bfloat16


def test_entr_gradient():
    x = mt.tensor([0.3, 1.0, 2.5], dtype=F64, requires_grad=True)
    assert gradcheck(special.entr, (x,))
    edge = mt.tensor([-1.0, 0.0, 0.5], requires_grad=True)
    special.entr(edge).sum().backward()  # PyTorch: g * -(1 + log x): nan below 0, +inf at 0
    g = edge.grad.numpy()
    assert np.isnan(g[0]) and g[1] == np.inf and np.isclose(g[2], -(1 + np.log(0.5)))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-37.0, 38.0), min_size=1, max_size=20))  # ndtr(-37) is still a normal float
def test_ndtr_matches_scipy(values):
    x = np.array(values)
    got = special.ndtr(mt.tensor(x, dtype=F64)).numpy()
    assert np.allclose(got, sp.ndtr(x), rtol=1e-12, atol=0)  # x / sqrt 2 rounds: ~2 z^2 eps in the tail


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1e-300, 1.0, exclude_max=True), min_size=1, max_size=20))
def test_ndtri_matches_scipy(values):
    p = np.array(values + [1 - v for v in values if v < 0.5])
    got = special.ndtri(mt.tensor(p, dtype=F64)).numpy()
    assert np.allclose(got, sp.ndtri(p), rtol=1e-12, atol=1e-12)


def test_ndtri_edges_and_dtypes():
    p = mt.tensor([0.0, 1.0, 0.5, -0.1, 1.5, float("nan")], dtype=F64)
    assert np.array_equal(special.ndtri(p).numpy(), [-np.inf, np.inf, 0.0, np.nan, np.nan, np.nan], equal_nan=True)
    f32 = special.ndtri(mt.tensor([1e-38, 0.025, 0.975]))
    assert f32.dtype == mt.float32 and np.allclose(f32.numpy(), sp.ndtri([1e-38, 0.025, 0.975]), rtol=1e-6)
    assert special.ndtr(mt.tensor([0, 1])).dtype == mt.float32


def test_ndtr_ndtri_gradients():
    x = mt.tensor([-3.0, -0.2, 0.0, 1.5], dtype=F64, requires_grad=True)
    assert gradcheck(special.ndtr, (x,))
    p = mt.tensor([1e-4, 0.1, 0.5, 0.93], dtype=F64, requires_grad=True)
    assert gradcheck(special.ndtri, (p,), rtol=1e-4)
    special.ndtri(p).sum().backward()
    y = sp.ndtri(p.detach().numpy())
    assert np.allclose(p.grad.numpy(), np.sqrt(2 * np.pi) * np.exp(y * y / 2))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["entr", "ndtr", "ndtri", "expit", "erf", "erfc", "erfinv", "exp2", "expm1",
                                  "log1p", "round"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(name, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    inside = {"ndtri": rng.uniform(0, 1, 50), "erfinv": rng.uniform(-1, 1, 50), "log1p": rng.uniform(-0.9, 5, 50)}
    x0 = inside.get(name, rng.standard_normal(50) * 3)
    if name == "entr":
        x0 = np.concatenate([np.abs(x0), [0.0, -1.0]])
    x0 = np.concatenate([x0, [0.0]]) if name != "entr" else x0
    x, tx = mt.tensor(x0, dtype=getattr(mt, dtype), requires_grad=True), torch.tensor(
        x0, dtype=getattr(torch, dtype), requires_grad=True)
    y, ty = getattr(special, name)(x), getattr(torch.special, name)(tx)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert np.allclose(y.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)
    if name != "round":
        y.sum().backward()
        ty.sum().backward()
        assert np.allclose(x.grad.numpy(), tx.grad.numpy(), rtol=10 * tol, atol=tol, equal_nan=True)


@pytest.mark.torch
def test_reductions_match_torch():
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(1).standard_normal((3, 5))
    for name, args in (("softmax", (1,)), ("log_softmax", (0,)), ("logsumexp", (1,))):
        ours = getattr(special, name)(mt.tensor(x0), *args).numpy()
        assert np.allclose(ours, getattr(torch.special, name)(torch.tensor(x0), *args).numpy(), atol=1e-6)
