"""``nn.utils.parametrize``: values and gradients against float64 NumPy, assignment through right_inverse,
chains, several originals, caching, state_dict round trips, training through a parametrization, removal;
PyTorch parity (marked torch) on the layout of the module."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.utils.parametrize as P


class Symmetric(nn.Module):
    """triu(X) + triu(X, 1)^T."""

    def forward(self, X: mt.Tensor) -> mt.Tensor:
        return X.triu() + X.triu(1).T

    def right_inverse(self, A: mt.Tensor) -> mt.Tensor:
        return A.triu()


class Double(nn.Module):
    calls = 0

    def forward(self, X: mt.Tensor) -> mt.Tensor:
        Double.calls += 1
        return 2 * X

    def right_inverse(self, A: mt.Tensor) -> mt.Tensor:
        return A / 2


class RankOne(nn.Module):
    """x y^T from two vectors; right_inverse splits a matrix into its first column and row scaled."""

    def forward(self, x: mt.Tensor, y: mt.Tensor) -> mt.Tensor:
        return x.unsqueeze(-1) @ y.unsqueeze(-2)

    def right_inverse(self, Z: mt.Tensor) -> tuple[mt.Tensor, mt.Tensor]:
        return Z[:, 0].clone(), Z[0, :] / Z[0, 0]


def _sym_np(x: np.ndarray) -> np.ndarray:
    return np.triu(x) + np.triu(x, 1).T


def _linear(seed: int = 0, n: int = 4) -> nn.Linear:
    mt.manual_seed(seed)
    return nn.Linear(n, n).double()


def test_value_layout_and_class_swap():
    m = _linear()
    w0 = m.weight
    w_np = w0.detach().numpy().copy()
    P.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert P.type_before_parametrizations(m) is nn.Linear
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert isinstance(m.parametrizations.weight, P.ParametrizationList)
    assert m.parametrizations.weight.original is w0  # the same Parameter object, now holding triu(W)
    np.testing.assert_allclose(w0.detach().numpy(), np.triu(w_np))
    np.testing.assert_allclose(m.weight.detach().numpy(), _sym_np(np.triu(w_np)))
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert type(nn.Linear(2, 2)) is nn.Linear  # other instances keep their class


def test_gradient_against_numpy():
    m = _linear(1)
    P.register_parametrization(m, "weight", Symmetric())
    x = np.random.default_rng(0).standard_normal((5, 4))
    c = np.random.default_rng(1).standard_normal((5, 4))
    (m(mt.tensor(x)) * mt.tensor(c)).sum().backward()
    g = c.T @ x  # dL/dW
    expected = np.triu(g) + np.triu(g.T, 1)  # W = triu(X) + triu(X,1)^T
    np.testing.assert_allclose(m.parametrizations.weight.original.grad.numpy(), expected, rtol=1e-12)


def test_assignment_runs_right_inverse():
    m = _linear()
    P.register_parametrization(m, "weight", Symmetric())
    A = np.random.default_rng(2).standard_normal((4, 4))
    A = A + A.T
    original = m.parametrizations.weight.original
    m.weight = mt.tensor(A)
    assert m.parametrizations.weight.original is original
    np.testing.assert_allclose(m.weight.detach().numpy(), A)


def test_chain_of_parametrizations():
    m = _linear()
    w_np = m.weight.detach().numpy().copy()
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Double())
    assert len(m.parametrizations.weight) == 2
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * _sym_np(np.triu(w_np)))
    A = np.eye(4) * 3.0
    m.weight = mt.tensor(A)  # Double's inverse, then Symmetric's
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(), A / 2)
    np.testing.assert_allclose(m.weight.detach().numpy(), A)


def test_several_originals():
    m = _linear()
    col = np.arange(1.0, 5.0)
    m.weight.data = mt.tensor(np.outer(col, col))
    P.register_parametrization(m, "weight", RankOne())
    chain = m.parametrizations.weight
    assert not chain.is_tensor and chain.ntensors == 2
    assert isinstance(chain.original0, nn.Parameter) and isinstance(chain.original1, nn.Parameter)
    assert not hasattr(chain, "original")
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    np.testing.assert_allclose(m.weight.detach().numpy(), np.outer(col, col))
    with pytest.raises(ValueError, match="sequence of tensors"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().numpy(), np.outer(col, col))


def test_remove_keeps_the_parameter_object():
    m = _linear()
    P.register_parametrization(m, "weight", Double())
    original = m.parametrizations.weight.original
    value = m.weight.detach().numpy().copy()
    P.remove_parametrizations(m, "weight", leave_parametrized=True)
    assert m.weight is original and type(m) is nn.Linear and not hasattr(m, "parametrizations")
    np.testing.assert_allclose(m.weight.detach().numpy(), value)
    assert list(m.state_dict()) == ["bias", "weight"]  # re-registered last, as in PyTorch

    P.register_parametrization(m, "weight", Double())
    halved = m.parametrizations.weight.original.detach().numpy().copy()
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_allclose(m.weight.detach().numpy(), halved)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        P.remove_parametrizations(m, "weight")


def test_two_tensors_and_buffers():
    m = nn.BatchNorm1d(3).double()
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "running_var", Double())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert [n for n, _ in m.named_buffers()].count("parametrizations.running_var.original") == 1
    np.testing.assert_allclose(m.running_var.numpy(), np.ones(3))  # Double(right_inverse(1)) = 1
    np.testing.assert_allclose(m.parametrizations.running_var.original.numpy(), 0.5 * np.ones(3))
    P.remove_parametrizations(m, "weight")
    assert P.is_parametrized(m) and type(m).__name__ == "ParametrizedBatchNorm1d"
    P.remove_parametrizations(m, "running_var")
    assert type(m) is nn.BatchNorm1d and "running_var" in m._buffers


def test_cached():
    m = _linear()
    P.register_parametrization(m, "weight", Double())
    Double.calls = 0
    m.weight, m.weight
    assert Double.calls == 2
    with P.cached():
        a, b = m.weight, m.weight
        with P.cached():
            c = m.weight
    assert a is b is c and Double.calls == 3
    m.weight
    assert Double.calls == 4  # the cache is dropped when the block exits


def test_checks_and_unsafe():
    m = _linear()

    class Shrink(nn.Module):
        def forward(self, X: mt.Tensor) -> mt.Tensor:
            return X[:2]

    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear and "weight" in m._parameters
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (2, 4)
    with pytest.raises(ValueError, match="does not have a parameter"):
        P.register_parametrization(m, "nothing", Double())

    class NoInverse(nn.Module):
        def forward(self, X: mt.Tensor) -> mt.Tensor:
            return X

    m2 = _linear()
    P.register_parametrization(m2, "weight", NoInverse())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m2.weight = mt.zeros(4, 4, dtype=mt.float64)


def test_state_dict_round_trip_and_copies():
    m = _linear(3)
    P.register_parametrization(m, "weight", Symmetric())
    other = _linear(4)
    P.register_parametrization(other, "weight", Symmetric())
    other.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(other.weight.detach().numpy(), m.weight.detach().numpy())
    clone = copy.deepcopy(m)
    assert type(clone) is type(m) and clone.parametrizations.weight.original is not m.parametrizations.weight.original
    np.testing.assert_array_equal(clone.weight.detach().numpy(), m.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def test_training_through_a_parametrization():
    m = _linear(5)
    P.register_parametrization(m, "weight", Symmetric())
    opt = mt.optim.SGD(m.parameters(), lr=0.05)
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((16, 4)))
    target = x @ mt.tensor(np.diag([1.0, 2.0, 3.0, 4.0]))
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = ((m(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)


def test_train_mode_follows_the_module():
    m = _linear().eval()
    d = Double()
    P.register_parametrization(m, "weight", d)
    assert not d.training
    m.train()
    assert d.training


def test_transfer_parametrizations_and_params():
    a, b = _linear(6), _linear(7)
    P.register_parametrization(a, "weight", Symmetric())
    P.transfer_parametrizations_and_params(a, b)
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    np.testing.assert_array_equal(b.weight.detach().numpy(), a.weight.detach().numpy())


@pytest.mark.torch
def test_layout_matches_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.parametrize as TP

    class TSym(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).T

        def right_inverse(self, A):
            return A.triu()

    tm = torch.nn.Linear(4, 4).double()
    m = _linear()
    m.load_state_dict({k: mt.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    TP.register_parametrization(tm, "weight", TSym())
    P.register_parametrization(m, "weight", Symmetric())
    assert list(m.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in m.named_modules()] == [n for n, _ in tm.named_modules()]
    assert type(m).__name__ == type(tm).__name__
    np.testing.assert_allclose(m.weight.detach().numpy(), tm.weight.detach().numpy())
    x = np.random.default_rng(0).standard_normal((3, 4))
    m(mt.tensor(x)).pow(2).sum().backward()
    tm(torch.tensor(x)).pow(2).sum().backward()
    np.testing.assert_allclose(m.parametrizations.weight.original.grad.numpy(),
                               tm.parametrizations.weight.original.grad.numpy(), rtol=1e-12)


# ------------------------------------------------------------------------------------ parametrizations.orthogonal
from minitensor.nn.utils import parametrizations as PZ  # noqa: E402
from minitensor.testing import gradcheck  # noqa: E402


def _orthonormality_error(w: np.ndarray) -> float:
    q = w if w.shape[-2] >= w.shape[-1] else np.swapaxes(w, -1, -2)
    return float(np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(q.shape[-1])).max())


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orth_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False])
def test_orthogonal_is_orthogonal_and_trains(shape, orth_map, triv):
    mt.manual_seed(0)
    m = nn.Linear(shape[1], shape[0]).double()
    PZ.orthogonal(m, orthogonal_map=orth_map, use_trivialization=triv)
    assert _orthonormality_error(m.weight.detach().numpy()) < 1e-12
    expected_map = orth_map or ("matrix_exp" if shape[0] == shape[1] else "householder")
    assert m.parametrizations.weight[0].orthogonal_map.name == expected_map
    assert ("parametrizations.weight.0.base" in m.state_dict()) == triv
    opt = mt.optim.SGD(m.parameters(), lr=0.1)
    x = mt.randn(8, shape[1], dtype=mt.float64)
    before = m.weight.detach().numpy().copy()
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(3).sum().backward()
        opt.step()
    after = m.weight.detach().numpy()
    assert _orthonormality_error(after) < 1e-10 and np.abs(after - before).max() > 1e-6


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_batch_of_matrices(orth_map):
    m = nn.Module()
    m.w = nn.Parameter(mt.tensor(np.random.default_rng(0).standard_normal((2, 5, 3))))
    PZ.orthogonal(m, "w", orthogonal_map=orth_map)
    w = m.w.detach().numpy()
    assert w.shape == (2, 5, 3) and _orthonormality_error(w) < 1e-12
    m.w.sum().backward()
    assert m.parametrizations.w.original.grad.shape == (2, 5, 3)


def test_orthogonal_keeps_an_orthogonal_weight_and_assignment():
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 5)))
    m = nn.Linear(5, 5).double()
    m.weight.data = mt.tensor(q)
    PZ.orthogonal(m)  # trivialization: base = the weight itself, original = -I
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-12)
    np.testing.assert_array_equal(m.parametrizations.weight.original.detach().numpy(), -np.eye(5))
    q2, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((5, 5)))
    m.weight = mt.tensor(q2)
    np.testing.assert_allclose(m.weight.detach().numpy(), q2, atol=1e-12)
    m3 = nn.Linear(5, 5).double()
    PZ.orthogonal(m3, orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m3.weight = mt.tensor(q2)
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="matrix or batch of matrices"):
        PZ.orthogonal(nn.Linear(3, 3), "bias")


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_gradient_by_finite_differences(orth_map):
    mt.manual_seed(1)
    m = nn.Linear(3, 4).double()
    PZ.orthogonal(m, orthogonal_map=orth_map)
    chain = m.parametrizations.weight
    x = np.random.default_rng(0).standard_normal((4, 3))
    # householder reads the diagonal's signs through .int() (truncation): -1.5 stays -1 under the nudges
    x[np.arange(3), np.arange(3)] = -1.5
    X = mt.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: chain[0](t), (X,))


@pytest.mark.torch
@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_forward_matches_pytorch(orth_map):
    torch = pytest.importorskip("torch")
    from torch.nn.utils import parametrizations as TPZ
    m, tm = nn.Linear(3, 5).double(), torch.nn.Linear(3, 5).double()
    PZ.orthogonal(m, orthogonal_map=orth_map)
    TPZ.orthogonal(tm, orthogonal_map=orth_map)
    assert list(m.state_dict()) == list(tm.state_dict())
    base = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 5)))[0]
    x = np.random.default_rng(1).standard_normal((5, 3))
    x[np.arange(3), np.arange(3)] = -1.0
    with torch.no_grad():
        tm.parametrizations.weight[0].base.copy_(torch.tensor(base))
        tm.parametrizations.weight.original.copy_(torch.tensor(x))
    m.parametrizations.weight[0].base = mt.tensor(base)
    m.parametrizations.weight.original.data = mt.tensor(x)
    np.testing.assert_allclose(m.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-12)
    m.weight.pow(3).sum().backward()
    tm.weight.pow(3).sum().backward()
    np.testing.assert_allclose(m.parametrizations.weight.original.grad.numpy(),
                               tm.parametrizations.weight.original.grad.numpy(), atol=1e-10)


def test_assignment_is_a_write_for_autograd():
    class Square(nn.Module):
        def forward(self, X: mt.Tensor) -> mt.Tensor:
            return X * X  # saves X for backward

        def right_inverse(self, A: mt.Tensor) -> mt.Tensor:
            return A

    m = _linear()
    P.register_parametrization(m, "weight", Square(), unsafe=True)
    out = m(mt.randn(2, 4, dtype=mt.float64)).sum()
    m.weight = mt.zeros(4, 4, dtype=mt.float64)  # PyTorch's set_: the saved original is stale now
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
