"""Weight and spectral normalization, both forms: ``nn.utils.parametrizations.weight_norm / spectral_norm``
and the hook-based ``nn.utils.weight_norm / spectral_norm``. Values against float64 NumPy (power iteration
written out), gradients by finite differences, state_dict layouts and round trips, a few training steps;
PyTorch parity (marked torch) from identical weights and identical u, v."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn.utils import parametrizations as PZ
from minitensor.nn.utils import parametrize as P
from minitensor.testing import gradcheck


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _norm_except_dim(v: np.ndarray, dim: int) -> np.ndarray:
    if dim == -1:
        return np.sqrt((v ** 2).sum())
    others = tuple(d for d in range(v.ndim) if d != dim)
    return np.sqrt((v ** 2).sum(axis=others, keepdims=True))


def _as_matrix(w: np.ndarray, dim: int) -> np.ndarray:
    return np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)


def _normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    return x / max(np.linalg.norm(x), eps)


def _conv(seed: int = 0) -> nn.Conv2d:
    mt.manual_seed(seed)
    return nn.Conv2d(3, 4, 3).double()


def _quiet_weight_norm(module: nn.Module, **kw) -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return nn.utils.weight_norm(module, **kw)


# ---------------------------------------------------------------------------------------- the ATen ops
@pytest.mark.parametrize("dim", [0, 1, 2, 3, -1, -2])
def test_norm_except_dim_and_weight_norm_op(dim):
    v = _rng(0).standard_normal((3, 4, 2, 5))
    expected = _norm_except_dim(v, dim if dim == -1 else dim % 4)
    got = mt.norm_except_dim(mt.tensor(v), 2, dim)
    assert tuple(got.shape) == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    g = _rng(1).standard_normal(expected.shape)
    np.testing.assert_allclose(mt._weight_norm(mt.tensor(v), mt.tensor(g), dim).numpy(), v * g / expected,
                               rtol=1e-12)
    assert gradcheck(lambda a, b: mt._weight_norm(a, b, dim), (mt.tensor(v, requires_grad=True),
                                                              mt.tensor(g, requires_grad=True)))


def test_norm_except_dim_of_a_vector():
    v = np.array([3.0, -4.0, 0.5])
    np.testing.assert_allclose(mt.norm_except_dim(mt.tensor(v), 2, 0).numpy(), np.abs(v))
    np.testing.assert_allclose(mt.norm_except_dim(mt.tensor(v), 2, -1).numpy(), np.linalg.norm(v))


# ------------------------------------------------------------------------------- parametrized weight_norm
@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm(dim):
    m = _conv()
    w = m.weight.detach().numpy().copy()
    PZ.weight_norm(m, dim=dim)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    ref_dim = -1 if dim is None else dim
    np.testing.assert_allclose(g.detach().numpy(), _norm_except_dim(w, ref_dim), rtol=1e-12)
    np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-12)  # initially the same weight
    g.data = mt.tensor(_rng(2).standard_normal(tuple(g.shape)))
    np.testing.assert_allclose(m.weight.detach().numpy(), g.detach().numpy() * w / _norm_except_dim(w, ref_dim),
                               rtol=1e-12)
    x = mt.tensor(_rng(3).standard_normal((2, 3, 5, 5)))
    assert gradcheck(lambda gg, vv: nn.functional.conv2d(x, mt._weight_norm(vv, gg, ref_dim)),
                     (g.detach().requires_grad_(), v.detach().requires_grad_()))


def test_parametrized_weight_norm_trains_and_round_trips():
    m = nn.Linear(3, 2).double()
    PZ.weight_norm(m)
    opt = mt.optim.Adam(m.parameters(), lr=0.05)
    x = mt.tensor(_rng(0).standard_normal((16, 3)))
    y = x @ mt.tensor(_rng(1).standard_normal((3, 2)))
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    other = PZ.weight_norm(nn.Linear(3, 2).double())
    other.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(other(x).detach().numpy(), m(x).detach().numpy())
    P.remove_parametrizations(m, "weight")
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)


# ----------------------------------------------------------------------------- parametrized spectral_norm
def _power_iterations(w_mat: np.ndarray, u: np.ndarray, v: np.ndarray, n: int, v_first: bool = False):
    for _ in range(n):
        if v_first:
            v = _normalize(w_mat.T @ u)
            u = _normalize(w_mat @ v)
        else:
            u = _normalize(w_mat @ v)
            v = _normalize(w_mat.T @ u)
    return u, v


@pytest.mark.parametrize("make, dim", [(lambda: nn.Linear(5, 3), 0), (lambda: nn.Conv2d(2, 4, 3), 0),
                                       (lambda: nn.ConvTranspose2d(2, 4, 3), 1)])
def test_parametrized_spectral_norm_against_numpy(make, dim):
    mt.manual_seed(0)
    m = make().double()
    w = m.weight.detach().numpy().copy()
    PZ.spectral_norm(m)
    sn = m.parametrizations.weight[0]
    assert sn.dim == dim
    assert list(m.state_dict())[-3:] == ["parametrizations.weight.original", "parametrizations.weight.0._u",
                                         "parametrizations.weight.0._v"]
    w_mat = _as_matrix(w, dim)
    # the warm-up iterations end with v = normalize(W^T u)
    np.testing.assert_allclose(sn._v.numpy(), _normalize(w_mat.T @ sn._u.numpy()), rtol=1e-10)
    u0, v0 = _normalize(_rng(1).standard_normal(w_mat.shape[0])), _normalize(_rng(2).standard_normal(w_mat.shape[1]))
    sn._u.copy_(mt.tensor(u0))
    sn._v.copy_(mt.tensor(v0))
    u_id = sn._u
    for _ in range(3):
        value = m.weight
    u, v = _power_iterations(w_mat, u0, v0, 3)
    assert sn._u is u_id  # updated in place
    np.testing.assert_allclose(sn._u.numpy(), u, rtol=1e-10)
    np.testing.assert_allclose(sn._v.numpy(), v, rtol=1e-10)
    np.testing.assert_allclose(value.detach().numpy(), w / (u @ w_mat @ v), rtol=1e-10)
    m.eval()
    m.weight
    np.testing.assert_allclose(sn._u.numpy(), u, rtol=1e-10)  # no iteration in eval mode
    m.train()
    for _ in range(200):
        m.weight
    sigma = np.linalg.svd(w_mat, compute_uv=False)[0]
    np.testing.assert_allclose(np.linalg.svd(_as_matrix(m.weight.detach().numpy(), dim), compute_uv=False)[0],
                               1.0, rtol=1e-6)
    np.testing.assert_allclose(sn._u.numpy() @ w_mat @ sn._v.numpy(), sigma, rtol=1e-6)


def test_parametrized_spectral_norm_gradient_and_two_forwards():
    mt.manual_seed(3)
    m = PZ.spectral_norm(nn.Linear(4, 3).double())
    sn = m.parametrizations.weight[0]
    m.eval()  # u, v fixed: W -> W / (u^T W v) is a smooth function
    assert gradcheck(sn, (mt.tensor(_rng(0).standard_normal((3, 4)), requires_grad=True),))
    m.train()
    x1, x2 = mt.randn(2, 4, dtype=mt.float64), mt.randn(2, 4, dtype=mt.float64)
    (m(x1).sum() - m(x2).sum()).backward()  # GAN's D(real) - D(fake): two in-place updates, one backward
    assert m.parametrizations.weight.original.grad is not None


def test_parametrized_spectral_norm_of_a_vector_and_checks():
    m = nn.Linear(3, 3).double()
    PZ.spectral_norm(m, "bias")
    b = m.parametrizations.bias.original.detach().numpy()
    np.testing.assert_allclose(m.bias.detach().numpy(), b / np.linalg.norm(b), rtol=1e-12)
    assert "parametrizations.bias.0._u" not in m.state_dict()
    with pytest.raises(ValueError, match="n_power_iterations"):
        PZ.spectral_norm(nn.Linear(3, 3), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        PZ.spectral_norm(nn.Linear(3, 3), dim=2)
    with pytest.raises(ValueError, match="no parameter or buffer"):
        PZ.spectral_norm(nn.Linear(3, 3), "nope")


# ------------------------------------------------------------------------------------ hook-based forms
def test_hook_weight_norm():
    m = _conv(1)
    w = m.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(m.weight_g.detach().numpy(), _norm_except_dim(w, 0), rtol=1e-12)
    m.weight_g.data = mt.tensor(_rng(0).standard_normal((4, 1, 1, 1)))
    x = mt.tensor(_rng(1).standard_normal((2, 3, 5, 5)))
    out = m(x)  # the pre-hook recomputes weight
    np.testing.assert_allclose(m.weight.detach().numpy(), m.weight_g.detach().numpy() * w / _norm_except_dim(w, 0),
                               rtol=1e-12)
    out.sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        _quiet_weight_norm(m)
    value = m.weight.detach().numpy().copy()
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and not m._forward_pre_hooks
    np.testing.assert_allclose(m.weight.detach().numpy(), value, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


def test_hook_weight_norm_whole_tensor():
    m = _quiet_weight_norm(nn.Linear(3, 2).double(), dim=None)
    assert tuple(m.weight_g.shape) == ()
    np.testing.assert_allclose(m.weight_g.item(), np.linalg.norm(m.weight_v.detach().numpy()), rtol=1e-12)


def test_hook_spectral_norm_against_numpy():
    mt.manual_seed(0)
    m = nn.Linear(5, 3).double()
    w = m.weight.detach().numpy().copy()
    nn.utils.spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    np.testing.assert_array_equal(m.weight.numpy(), w)  # the raw weight until the first forward
    u0, v0 = _normalize(_rng(1).standard_normal(3)), _normalize(_rng(2).standard_normal(5))
    m.weight_u.copy_(mt.tensor(u0))
    m.weight_v.copy_(mt.tensor(v0))
    x = mt.tensor(_rng(3).standard_normal((4, 5)))
    for _ in range(3):
        out = m(x)
    u, v = _power_iterations(w, u0, v0, 3, v_first=True)  # this form updates v first
    np.testing.assert_allclose(m.weight_u.numpy(), u, rtol=1e-10)
    np.testing.assert_allclose(m.weight_v.numpy(), v, rtol=1e-10)
    np.testing.assert_allclose(out.detach().numpy(), x.numpy() @ (w / (u @ w @ v)).T + m.bias.detach().numpy(),
                               rtol=1e-10)
    m.eval()
    m(x)
    np.testing.assert_allclose(m.weight_u.numpy(), u, rtol=1e-10)
    other = nn.utils.spectral_norm(nn.Linear(5, 3).double())
    other.load_state_dict(m.state_dict())
    other.eval()
    np.testing.assert_array_equal(other(x).detach().numpy(), m(x).detach().numpy())
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and not m._forward_pre_hooks
    np.testing.assert_allclose(m.weight.detach().numpy(), w / (u @ w @ v), rtol=1e-10)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(m)


def test_hook_forms_train():
    mt.manual_seed(0)
    model = nn.Sequential(nn.utils.spectral_norm(nn.Linear(3, 8)), nn.Tanh(),
                          _quiet_weight_norm(nn.Linear(8, 1))).double()
    opt = mt.optim.Adam(model.parameters(), lr=0.02)
    x = mt.tensor(_rng(0).standard_normal((32, 3)))
    y = mt.tensor(np.sin(x.numpy().sum(1, keepdims=True)))
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    s = np.linalg.svd(model[0].weight.detach().numpy(), compute_uv=False)[0]
    assert abs(s - 1.0) < 0.1  # one power step per call keeps sigma close


# ----------------------------------------------------------------------------------------------- PyTorch
def _pair(torch, make_mt, make_torch, seed=0):
    m, tm = make_mt().double(), make_torch().double()
    rng = _rng(seed)
    for name, p in tm.named_parameters():
        value = rng.standard_normal(tuple(p.shape))
        with torch.no_grad():
            p.copy_(torch.tensor(value))
        getattr(m, name).data = mt.tensor(value)
    return m, tm


@pytest.mark.torch
@pytest.mark.parametrize("hook_form", [False, True])
def test_weight_norm_matches_pytorch(hook_form):
    torch = pytest.importorskip("torch")
    m, tm = _pair(torch, lambda: nn.Conv2d(3, 4, 3), lambda: torch.nn.Conv2d(3, 4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if hook_form:
            nn.utils.weight_norm(m, dim=1)
            torch.nn.utils.weight_norm(tm, dim=1)
        else:
            PZ.weight_norm(m, dim=1)
            torch.nn.utils.parametrizations.weight_norm(tm, dim=1)
    assert list(m.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(m.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
    x = _rng(5).standard_normal((2, 3, 6, 6))
    out, t_out = m(mt.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    out.pow(2).sum().backward()
    t_out.pow(2).sum().backward()
    for (name, p), (t_name, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert name == t_name
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9)


@pytest.mark.torch
@pytest.mark.parametrize("hook_form", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_spectral_norm_matches_pytorch(hook_form, transpose):
    torch = pytest.importorskip("torch")
    cls, t_cls = (nn.ConvTranspose2d, torch.nn.ConvTranspose2d) if transpose else (nn.Conv2d, torch.nn.Conv2d)
    m, tm = _pair(torch, lambda: cls(3, 4, 3), lambda: t_cls(3, 4, 3))
    if hook_form:
        nn.utils.spectral_norm(m, n_power_iterations=2)
        torch.nn.utils.spectral_norm(tm, n_power_iterations=2)
        u_name, v_name = "weight_u", "weight_v"
    else:
        PZ.spectral_norm(m, n_power_iterations=2)
        torch.nn.utils.parametrizations.spectral_norm(tm, n_power_iterations=2)
        u_name, v_name = "parametrizations.weight.0._u", "parametrizations.weight.0._v"
    assert list(m.state_dict()) == list(tm.state_dict())
    t_state = tm.state_dict()
    for name in (u_name, v_name):  # the same starting vectors
        m.state_dict()[name].copy_(mt.tensor(t_state[name].numpy()))
    x = _rng(6).standard_normal((2, 3, 5, 5))
    for _ in range(3):
        out, t_out = m(mt.tensor(x)), tm(torch.tensor(x))
    for name in (u_name, v_name):
        np.testing.assert_allclose(m.state_dict()[name].numpy(), tm.state_dict()[name].numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9, atol=1e-12)
    out.pow(2).sum().backward()
    t_out.pow(2).sum().backward()
    for (name, p), (t_name, tp) in zip(m.named_parameters(), tm.named_parameters()):
        assert name == t_name
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_parametrized_weight_norm_loads_a_hook_based_state_dict():
    old = _quiet_weight_norm(_conv(4))
    old.weight_g.data = mt.tensor(_rng(0).standard_normal((4, 1, 1, 1)))
    state = old.state_dict()
    new = PZ.weight_norm(_conv(5))
    result = new.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    assert list(state) == ["bias", "weight_g", "weight_v"]  # the caller's dict is left as it was
    x = mt.tensor(_rng(1).standard_normal((1, 3, 5, 5)))
    np.testing.assert_allclose(new(x).detach().numpy(), old(x).detach().numpy(), rtol=1e-12)
    # in a parent module the keys carry its prefix
    parent_old, parent_new = nn.Sequential(_quiet_weight_norm(_conv(6))), nn.Sequential(PZ.weight_norm(_conv(7)))
    parent_new.load_state_dict(parent_old.state_dict())
    np.testing.assert_allclose(parent_new(x).detach().numpy(), parent_old(x).detach().numpy(), rtol=1e-12)


def test_load_state_dict_pre_hook_handle_and_with_module():
    m = nn.Linear(2, 2)
    seen = []
    handle = m._register_load_state_dict_pre_hook(lambda mod, sd, prefix, *rest: seen.append((mod, prefix)),
                                                  with_module=True)
    m.load_state_dict(m.state_dict())
    assert seen == [(m, "")]
    handle.remove()
    m.load_state_dict(m.state_dict())
    assert len(seen) == 1
