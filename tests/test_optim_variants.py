"""Adadelta, Adamax, NAdam, RAdam and ASGD against float64 NumPy references written here from PyTorch's
documented algorithms (and against PyTorch itself where it is installed).

As in test_optim.py, each trajectory feeds the same pre-drawn gradients to the optimizer and to the reference
for several steps. PyTorch keeps NAdam's ``mu_product`` and ASGD's ``eta`` and ``mu`` in 0-d tensors of the
default dtype (float32 here), so the references round those scalars to float32 exactly as PyTorch does.
"""
from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_optim import DTYPES, TOL, check_trajectory, draw, param, run, snapshot

import minitensor as mt
from minitensor import optim

f32 = np.float32  # PyTorch's dtype for the scalar state under the default float32


# ----------------------------------------------------------------------------------- references
def _g(grad, p, weight_decay, maximize):
    g = -grad if maximize else grad.copy()
    return g + weight_decay * p if weight_decay else g


def _decayed(p, grad, lr, weight_decay, decoupled, maximize):
    """(p, g) after the weight decay: decoupled (AdamW-style) shrinks p, else L2 adds to the gradient."""
    if decoupled:
        return p * (1 - lr * weight_decay), _g(grad, p, 0.0, maximize)
    return p, _g(grad, p, weight_decay, maximize)


def ref_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    """v = rho v + (1 - rho) g^2; dx = sqrt(u + eps) / sqrt(v + eps) g; u = rho u + (1 - rho) dx^2;
    p -= lr dx."""
    p = p.astype(np.float64)
    v, u, out = np.zeros_like(p), np.zeros_like(p), []
    for grad in grads:
        g = _g(grad, p, weight_decay, maximize)
        v = rho * v + (1 - rho) * g * g
        dx = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * dx * dx
        p = p - lr * dx
        out.append(p)
    return out


def ref_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False, lrs=None):
    """m = b1 m + (1 - b1) g; u = max(b2 u, |g| + eps); p -= lr / (1 - b1^t) m / u. ``lrs``: one lr per
    step (a schedule), overriding ``lr``."""
    b1, b2 = betas
    p = p.astype(np.float64)
    m, u, out = np.zeros_like(p), np.zeros_like(p), []
    for t, grad in enumerate(grads, start=1):
        g = _g(grad, p, weight_decay, maximize)
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - (lrs[t - 1] if lrs else lr) / (1 - b1 ** t) * m / u
        out.append(p)
    return out


def ref_nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
              decoupled_weight_decay=False, maximize=False):
    """mu_t = b1 (1 - 0.5 0.96^(t psi)); m, v as Adam's; p -= lr (1 - mu_t) / (1 - prod mu) g / d
    + lr mu_{t+1} / (1 - prod mu mu_{t+1}) m / d, d = sqrt(v / (1 - b2^t)) + eps; prod mu in float32."""
    b1, b2 = betas
    p = p.astype(np.float64)
    m, v, mu_product, out = np.zeros_like(p), np.zeros_like(p), f32(1.0), []
    for t, grad in enumerate(grads, start=1):
        p, g = _decayed(p, grad, lr, weight_decay, decoupled_weight_decay, maximize)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = f32(mu_product * f32(mu))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        d = np.sqrt(v / (1 - b2 ** t)) + eps
        prod = float(mu_product)
        p = p - lr * (1 - mu) / (1 - prod) * g / d - lr * mu_next / (1 - prod * mu_next) * m / d
        out.append(p)
    return out


def ref_radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
              maximize=False):
    """m, v as Adam's; rho_t = rho_inf - 2 t b2^t / (1 - b2^t); rectified adaptive step when rho_t > 5, else
    the bias-corrected momentum step."""
    b1, b2 = betas
    p = p.astype(np.float64)
    m, v, out = np.zeros_like(p), np.zeros_like(p), []
    rho_inf = 2 / (1 - b2) - 1
    for t, grad in enumerate(grads, start=1):
        p, g = _decayed(p, grad, lr, weight_decay, decoupled_weight_decay, maximize)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
        out.append(p)
    return out


def ref_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    """p = p (1 - lambd eta) - eta g; ax averages p from step t0 on; eta_{t+1} = lr / (1 + lambd lr t)^alpha,
    mu_{t+1} = 1 / max(1, t - t0), both kept in float32. Returns (params, averages) per step."""
    p = p.astype(np.float64)
    ax, eta, mu, out = np.zeros_like(p), f32(lr), f32(1.0), []
    for t, grad in enumerate(grads, start=1):
        g = _g(grad, p, weight_decay, maximize)
        p = p * (1 - lambd * float(eta)) - float(eta) * g
        ax = ax + float(mu) * (p - ax) if mu != 1 else p.copy()
        eta = f32(lr / (1 + lambd * lr * t) ** alpha)
        mu = f32(1 / max(1, t - t0))
        out.append((p, ax))
    return out


# ----------------------------------------------------------------------------------- trajectories
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rho,weight_decay,maximize",
                         list(itertools.product([0.9, 0.5], [0.0, 0.1], [False, True])))
def test_adadelta_trajectory(dtype, rho, weight_decay, maximize):
    kw = dict(lr=0.5, rho=rho, eps=1e-5, weight_decay=weight_decay, maximize=maximize)
    check_trajectory(lambda ps: optim.Adadelta(ps, **kw), lambda p, g: ref_adadelta(p, g, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("betas,weight_decay,maximize",
                         list(itertools.product([(0.9, 0.999), (0.5, 0.8)], [0.0, 0.1], [False, True])))
def test_adamax_trajectory(dtype, betas, weight_decay, maximize):
    kw = dict(lr=0.05, betas=betas, eps=1e-6, weight_decay=weight_decay, maximize=maximize)
    check_trajectory(lambda ps: optim.Adamax(ps, **kw), lambda p, g: ref_adamax(p, g, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("momentum_decay,weight_decay,decoupled,maximize",
                         list(itertools.product([4e-3, 0.5], [0.0, 0.1], [False, True], [False, True])))
def test_nadam_trajectory(dtype, momentum_decay, weight_decay, decoupled, maximize):
    kw = dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay, momentum_decay=momentum_decay,
              decoupled_weight_decay=decoupled, maximize=maximize)
    check_trajectory(lambda ps: optim.NAdam(ps, **kw), lambda p, g: ref_nadam(p, g, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("beta2,weight_decay,decoupled,maximize",
                         list(itertools.product([0.999, 0.6], [0.0, 0.1], [False, True], [False, True])))
def test_radam_trajectory(dtype, beta2, weight_decay, decoupled, maximize):
    """beta2 = 0.999 takes the plain momentum step for 5 steps and the rectified one after; beta2 = 0.6
    (rho_inf = 4) never rectifies."""
    rho_inf = 2 / (1 - beta2) - 1
    rho = [rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t) for t in range(1, 8)]
    assert (min(rho) <= 5 < max(rho)) if beta2 == 0.999 else max(rho) <= 5
    kw = dict(lr=0.05, betas=(0.8, beta2), eps=1e-6, weight_decay=weight_decay, decoupled_weight_decay=decoupled,
              maximize=maximize)
    check_trajectory(lambda ps: optim.RAdam(ps, **kw), lambda p, g: ref_radam(p, g, **kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("t0,weight_decay,maximize",
                         list(itertools.product([2.0, 1e6], [0.0, 0.1], [False, True])))
def test_asgd_trajectory_and_average(dtype, t0, weight_decay, maximize):
    """t0 = 2: the average starts moving away from the iterate at step 4 (mu < 1 from then on)."""
    kw = dict(lr=0.05, lambd=0.1, alpha=0.75, t0=t0, weight_decay=weight_decay, maximize=maximize)
    p0, grads = draw(0)
    p = param(p0, dtype)
    opt = optim.ASGD([p], **kw)
    want = ref_asgd(p0, [g.astype(dtype).astype(np.float64) for g in grads], **kw)
    for step, (grad, (wp, wax)) in enumerate(zip(grads, want), start=1):
        p.grad = mt.tensor(grad.astype(dtype))
        opt.step()
        np.testing.assert_allclose(p.array, wp, err_msg=f"param, step {step}", **TOL[dtype])
        np.testing.assert_allclose(opt.state[p]["ax"].array, wax, err_msg=f"ax, step {step}", **TOL[dtype])
    state = opt.state[p]
    assert state["eta"].item() == f32(0.05 / (1 + 0.1 * 0.05 * len(grads)) ** 0.75)
    assert state["mu"].item() == f32(1 / max(1, len(grads) - t0))
    if t0 == 2.0:
        assert not np.allclose(state["ax"].array, p.array)


OPTIMIZERS = {
    "Adadelta": (optim.Adadelta, ref_adadelta, dict(lr=0.5, rho=0.8, eps=1e-5)),
    "Adamax": (optim.Adamax, ref_adamax, dict(lr=0.05, betas=(0.8, 0.9))),
    "NAdam": (optim.NAdam, ref_nadam, dict(lr=0.05, momentum_decay=0.1)),
    "RAdam": (optim.RAdam, ref_radam, dict(lr=0.05, betas=(0.9, 0.9))),
}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(OPTIMIZERS)), seed=st.integers(0, 2**32 - 1), lr=st.floats(1e-4, 1.0),
       weight_decay=st.floats(0.0, 0.5), maximize=st.booleans(),
       shape=st.sampled_from([(1,), (5,), (2, 3), (2, 1, 3)]))
def test_any_hyperparameters_and_shapes_match_the_reference(name, seed, lr, weight_decay, maximize, shape):
    cls, ref, kw = OPTIMIZERS[name]
    kw = dict(kw, lr=lr, weight_decay=weight_decay, maximize=maximize)
    p0, grads = draw(seed, n_steps=6, shape=shape)
    p = param(p0)
    got = run(cls([p], **kw), [p], [grads], np.float64)
    for (g,), r in zip(got, ref(p0, grads, **kw)):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------- state, signatures, errors
STATE_KEYS = {
    optim.Adadelta: {"step", "square_avg", "acc_delta"},
    optim.Adamax: {"step", "exp_avg", "exp_inf"},
    optim.NAdam: {"step", "mu_product", "exp_avg", "exp_avg_sq"},
    optim.RAdam: {"step", "exp_avg", "exp_avg_sq"},
    optim.ASGD: {"step", "eta", "mu", "ax"},
}
RESUMABLE = [
    (optim.Adadelta, dict(lr=0.5, weight_decay=0.01)),
    (optim.Adamax, dict(lr=0.05, weight_decay=0.01)),
    (optim.NAdam, dict(lr=0.05, momentum_decay=0.2)),
    (optim.NAdam, dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.RAdam, dict(lr=0.05, betas=(0.9, 0.9))),
    (optim.ASGD, dict(lr=0.05, lambd=0.1, t0=2)),
]


@pytest.mark.parametrize("cls,kw", RESUMABLE, ids=lambda x: getattr(x, "__name__", ""))
@pytest.mark.parametrize("dtype", DTYPES)
def test_state_dict_round_trip_continues_the_trajectory(cls, kw, dtype):
    p0, grads = draw(20)
    a = param(p0, dtype)
    full = run(cls([a], **kw), [a], [grads], dtype)
    a = param(p0, dtype)
    first = cls([a], **kw)
    run(first, [a], [grads[:3]], dtype)
    saved = snapshot(first.state_dict())
    entry = saved["state"][0]
    assert set(entry) == STATE_KEYS[cls]  # PyTorch's state names
    assert all(isinstance(v, mt.Tensor) for v in entry.values()) and entry["step"].item() == 3
    a2 = param(a.array, dtype)
    second = cls([a2], lr=123.0)
    second.load_state_dict(saved)
    assert second.param_groups[0]["lr"] == kw["lr"]
    for key in ("step", "mu_product", "eta", "mu"):  # the scalars stay 0-d CPU tensors
        if key in second.state[a2]:
            value = second.state[a2][key]
            assert value.shape == () and value.device == mt.device("cpu")
    rest = run(second, [a2], [grads[3:]], dtype)
    for step, ((f,), (r,)) in enumerate(zip(full[3:], rest), start=4):
        np.testing.assert_array_equal(r, f, err_msg=f"step {step}")


def signature_text(cls: type) -> str:
    """``cls``'s constructor as "(name=default, ..., *, keyword_only=default)", without annotations."""
    parts: list[str] = []
    for p in inspect.signature(cls).parameters.values():
        if p.kind is p.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        parts.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}")
    return "(" + ", ".join(parts) + ")"


def test_signatures_and_defaults_are_pytorchs():
    """The parameters in PyTorch's order, with its defaults and its keyword-only split."""
    want = {
        optim.Adadelta: "(params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0, foreach=None, *, capturable=False, "
                        "maximize=False, differentiable=False)",
        optim.Adamax: "(params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, foreach=None, *, "
                      "maximize=False, differentiable=False, capturable=False)",
        optim.NAdam: "(params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, momentum_decay=0.004, "
                     "decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, "
                     "differentiable=False)",
        optim.RAdam: "(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, "
                     "decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, "
                     "differentiable=False)",
        optim.ASGD: "(params, lr=0.01, lambd=0.0001, alpha=0.75, t0=1000000.0, weight_decay=0, foreach=None, "
                    "maximize=False, differentiable=False, capturable=False)",
        optim.LBFGS: "(params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-07, tolerance_change=1e-09, "
                     "history_size=100, line_search_fn=None)",
    }
    for cls, signature in want.items():
        assert signature_text(cls) == signature, cls.__name__
    p = param(np.ones(2))
    assert optim.NAdam([p]).defaults == dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                                             momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False,
                                             capturable=False, differentiable=False, foreach=None)
    assert optim.LBFGS([p]).defaults["max_eval"] == 25  # max_iter * 5 // 4


@pytest.mark.parametrize("make,message", [
    (lambda p: optim.Adadelta(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.Adadelta(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: optim.Adamax(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adamax(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.NAdam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: optim.RAdam(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: optim.ASGD(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.ASGD(p, weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    (lambda p: optim.LBFGS(p, lr=-1), "Invalid learning rate: -1"),
])
def test_invalid_hyperparameters_raise_pytorchs_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make([param(np.ones(2))])


@pytest.mark.parametrize("cls", list(STATE_KEYS), ids=lambda c: c.__name__)
def test_updates_in_place_and_grad_untouched(cls):
    p0, grads = draw(1)
    p = param(p0, np.float32)
    param_array = p.array
    opt = cls([p], weight_decay=0.1)
    p.grad = mt.tensor(grads[0].astype(np.float32))
    opt.step()
    arrays = {k: v.array for k, v in opt.state[p].items()}
    for g in grads[1:]:
        p.grad = mt.tensor(g.astype(np.float32))
        before = p.grad.array.copy()
        p.grad.array.flags.writeable = False  # a write to the gradient raises
        opt.step()
        np.testing.assert_array_equal(p.grad.array, before)
        assert p.array is param_array and p.array.dtype == np.float32
        for key, array in arrays.items():
            assert opt.state[p][key].array is array, key


def test_lr_scheduler_drives_the_new_optimizers():
    """StepLR halves Adamax's lr every 2 steps: the trajectory is the reference's with that schedule."""
    p0, grads = draw(8)
    p = param(p0)
    opt = optim.Adamax([p], lr=0.1)
    scheduler = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    got = []
    for g in grads:
        p.grad = mt.tensor(g)
        opt.step()
        scheduler.step()
        got.append(p.array.copy())
    lrs = [0.1 * 0.5 ** (t // 2) for t in range(len(grads))]
    for step, (g, r) in enumerate(zip(got, ref_adamax(p0, grads, lrs=lrs)), start=1):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12, err_msg=f"step {step}")
    for cls in STATE_KEYS:
        q = param(p0)
        other = cls([q], lr=0.1)
        cosine = optim.lr_scheduler.CosineAnnealingLR(other, T_max=4)
        for g in grads[:4]:
            q.grad = mt.tensor(g)
            other.step()
            cosine.step()
        assert other.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-15), cls.__name__


# ------------------------------------------------------------------------------------- PyTorch
@pytest.mark.torch
@pytest.mark.parametrize("name,kw", [
    ("Adadelta", dict(lr=0.5, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05, lambd=0.1, t0=2, weight_decay=0.1)),
])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_pytorch(name, kw, dtype):
    torch = pytest.importorskip("torch")
    p0, grads = draw(4, n_steps=12)
    p = param(p0, dtype)
    got = run(getattr(optim, name)([p], **kw), [p], [grads], dtype)
    tp = torch.tensor(p0.astype(dtype), requires_grad=True)
    topt = getattr(torch.optim, name)([tp], **kw)
    for step, (g, (mine,)) in enumerate(zip(grads, got), start=1):
        tp.grad = torch.tensor(g.astype(dtype))
        topt.step()
        np.testing.assert_allclose(mine, tp.detach().numpy(), err_msg=f"step {step}", **TOL[dtype])
    theirs = topt.state_dict()["state"][0]
    assert set(theirs) == STATE_KEYS[getattr(optim, name)]
