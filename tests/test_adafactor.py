"""optim.Adafactor against a float64 NumPy transcription of PyTorch's algorithm (written here) over several
steps; state_dict round trip; PyTorch parity marked ``torch``."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import minitensor as mt
from tests.helpers import assert_close

SHAPES = [(4, 5), (3,), (2, 3, 4), ()]


def adafactor_ref(params, grads_per_step, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0,
                  maximize=False):
    """PyTorch's _single_tensor_adafactor on float64 arrays."""
    params = [p.copy() for p in params]
    state: list[dict] = [{} for _ in params]
    eps1, eps2 = eps
    for t, grads in enumerate(grads_per_step, start=1):
        for p, g, s in zip(params, grads, state):
            g = -g if maximize else g
            e1 = np.finfo(np.float64).eps if eps1 is None else eps1
            one_minus_beta2 = t ** beta2_decay
            rho = min(lr, 1 / np.sqrt(t))
            alpha = max(eps2, np.sqrt((p ** 2).sum()) / np.sqrt(max(p.size, 1))) * rho
            p *= 1 - lr * weight_decay
            if g.ndim > 1:
                r = s.setdefault("r", np.zeros(g.shape[:-1] + (1,)))
                c = s.setdefault("c", np.zeros(g.shape[:-2] + (1, g.shape[-1])))
                r += ((g ** 2).mean(-1, keepdims=True) - r) * one_minus_beta2
                c += ((g ** 2).mean(-2, keepdims=True) - c) * one_minus_beta2
                var = r @ c / np.maximum(r.mean(-2, keepdims=True), e1)
            else:
                v = s.setdefault("v", np.zeros(g.shape))
                v += (g * g - v) * one_minus_beta2
                var = v
            u = g / np.sqrt(np.maximum(var, e1 * e1))
            denom = max(1.0, np.sqrt((u ** 2).sum()) / (np.sqrt(u.size) * d))
            p -= alpha / denom * u
    return params


def _run(shapes, steps, seed=0, **kwargs):
    r = np.random.default_rng(seed)
    init = [r.standard_normal(s) for s in shapes]
    grads = [[r.standard_normal(s) for s in shapes] for _ in range(steps)]
    params = [mt.tensor(a, requires_grad=True) for a in init]
    opt = mt.optim.Adafactor(params, **kwargs)
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = mt.tensor(g)
        opt.step()
    return init, grads, params, opt


@pytest.mark.parametrize("kwargs", [{}, dict(lr=0.05, weight_decay=0.1, maximize=True),
                                    dict(eps=(1e-6, 1e-2), d=1.5, beta2_decay=-0.5), dict(lr=0.5, d=1.0)])
def test_adafactor_matches_the_reference_over_several_steps(kwargs):
    init, grads, params, opt = _run(SHAPES, 7, **kwargs)
    for p, want in zip(params, adafactor_ref(init, grads, **kwargs)):
        assert_close(p, want, rtol=1e-12, atol=1e-14)
    state = opt.state[params[0]]
    assert list(state) == ["step", "row_var", "col_var"] and float(state["step"]) == 7
    assert state["row_var"].shape == (4, 1) and state["col_var"].shape == (1, 5)
    assert list(opt.state[params[1]]) == ["step", "variance"]
    assert opt.state[params[2]]["col_var"].shape == (2, 1, 4)


def test_adafactor_state_dict_round_trip_and_checks():
    init, grads, params, opt = _run(SHAPES, 3, seed=1)
    copies = [mt.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    other = mt.optim.Adafactor(copies)
    other.load_state_dict(copy.deepcopy(opt.state_dict()))
    g = [np.random.default_rng(2).standard_normal(s) for s in SHAPES]
    for ps, o in ((params, opt), (copies, other)):
        for p, gi in zip(ps, g):
            p.grad = mt.tensor(gi)
        o.step()
    for a, b in zip(params, copies):
        assert_close(a, b.detach().numpy(), rtol=0, atol=0)
    for bad, message in ((dict(lr=-1.0), "Learning rate"), (dict(beta2_decay=0.5), "beta2_decay"),
                         (dict(eps=(-1.0, 1e-3)), "epsilon1"), (dict(eps=(None, -1.0)), "epsilon2"),
                         (dict(d=0.5), "Clipping threshold"), (dict(weight_decay=-1.0), "weight_decay")):
        with pytest.raises(ValueError, match=message):
            mt.optim.Adafactor([mt.zeros(2, requires_grad=True)], **bad)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adafactor_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(3)
    init = [r.standard_normal(s).astype(dtype) for s in SHAPES]
    ours = [mt.tensor(a, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    kwargs = dict(lr=0.03, weight_decay=0.01)
    opt, topt = mt.optim.Adafactor(ours, **kwargs), torch.optim.Adafactor(theirs, **kwargs)
    for _ in range(6):
        gs = [r.standard_normal(s).astype(dtype) for s in SHAPES]
        for p, g in zip(ours, gs):
            p.grad = mt.tensor(g)
        for p, g in zip(theirs, gs):
            p.grad = torch.tensor(g)
        opt.step()
        topt.step()
    tol = 1e-12 if dtype == "float64" else 2e-6
    for p, t in zip(ours, theirs):
        assert_close(p, t.detach().numpy(), rtol=tol, atol=tol)
    for key in ("row_var", "col_var"):
        assert_close(opt.state[ours[0]][key], topt.state[theirs[0]][key].numpy(), rtol=tol, atol=tol)
