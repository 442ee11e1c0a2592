"""autograd.grad walks only the graph newer than its inputs: a functional optimiser (torchopt's, as
madagra/basic-pinn trains) returns its parameters as new tensors, so each step's graph holds every step before
it; the walk must stop at the parameters' nodes (all inputs non-leaf) or below the tensors torch.func tracked,
and the gradients must be what the whole walk gives."""
from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import engine
from minitensor.func import functional_call, grad, jacrev, vjp, vmap


@pytest.fixture
def walked(monkeypatch):
    """How many nodes each autograd.grad's walk visits (one entry per call)."""
    counts: list[int] = []
    inner = engine._topological_order

    def spy(roots, floor=-1):
        order, deps = inner(roots, floor)
        counts.append(len(order))
        return order, deps
    monkeypatch.setattr(engine, "_topological_order", spy)
    return counts


def _history(x, steps=300):
    """x through ``steps`` recorded ops: a tensor whose graph is long."""
    for _ in range(steps):
        x = x * 1.001 + 0.001
    return x


def test_grad_wrt_non_leaf_inputs_walks_only_the_newer_graph(walked):
    w = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    p = _history(w)
    out = (p * p).sum() + p[0] ** 3
    (g,) = mt.autograd.grad(out, p)
    pv = p.detach().numpy()
    np.testing.assert_allclose(g.numpy(), 2 * pv + np.array([3 * pv[0] ** 2, 0.0]), rtol=1e-12)
    assert walked[-1] < 20, walked  # not the 600 nodes behind p


def test_grad_with_a_leaf_among_the_inputs_still_walks_everything(walked):
    w = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    p = _history(w, 50)
    out = (p * w).sum()
    gp, gw = mt.autograd.grad(out, (p, w))
    np.testing.assert_allclose(gp.numpy(), w.detach().numpy())
    expected = p.detach().numpy() + w.detach().numpy() * 1.001 ** 50  # d(p.w)/dw: p + w dp/dw
    np.testing.assert_allclose(gw.numpy(), expected, rtol=1e-12)
    assert walked[-1] >= 100  # the leaf w sits below the whole history: nothing is pruned


def test_func_grad_does_not_walk_a_closed_over_history(walked):
    w = mt.tensor(0.5, dtype=mt.float64, requires_grad=True)
    a = _history(w)  # a closed-over tensor with a long graph (a functional optimiser's parameter)

    def f(x):
        return a * x ** 3

    x = mt.tensor([1.0, 2.0, -1.5], dtype=mt.float64)
    d2 = vmap(grad(grad(f)))(x)
    np.testing.assert_allclose(d2.detach().numpy(), 6 * a.item() * x.numpy(), rtol=1e-12)
    assert max(walked) < 30, walked
    assert d2.requires_grad  # it depends on w through a, as torch.func keeps it
    (gw,) = mt.autograd.grad(d2.sum(), w)
    np.testing.assert_allclose(gw.item(), 6 * x.numpy().sum() * 1.001 ** 300, rtol=1e-12)


def test_func_results_released_or_kept_as_torch_func():
    w = mt.tensor(2.0, requires_grad=True)
    a = _history(w, 20)
    x = mt.tensor([1.0, 3.0])
    plain = grad(lambda t: (t ** 2).sum())(x)
    assert not plain.requires_grad and plain.grad_fn is None
    kept = grad(lambda t: (a * t).sum())(x)  # the gradient is a, whose graph reaches w
    assert kept.requires_grad
    out, fn = vjp(lambda t: a * t, x)
    assert out.requires_grad and fn(mt.ones(2))[0].requires_grad
    jac = jacrev(lambda t: t * t)(x)
    assert not jac.requires_grad
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 6.0]))


def _functional_adam_losses(lib, steps=6):
    """basic-pinn's logistic PINN: u' = u (1 - u) by vmap(grad(functional_call)), trained by torchopt's
    functional Adam (parameters returned as new tensors, gradients with create_graph), in float64."""
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(1, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1)).double()
    names = [n for n, _ in model.named_parameters()]
    params = tuple(lib.tensor(rng.normal(size=tuple(p.shape)), requires_grad=True) for p in model.parameters())
    xs = [lib.tensor(rng.uniform(-2, 2, 8)) for _ in range(steps)]

    def f(x, ps):
        return functional(model, dict(zip(names, ps)), (x.reshape(-1, 1),)).squeeze()
    functional = lib.func.functional_call
    dfdx = lib.func.vmap(lib.func.grad(f), in_dims=(0, None))
    mu = [lib.zeros_like(p) for p in params]
    nu = [lib.zeros_like(p) for p in params]
    losses = []
    for t, x in enumerate(xs, 1):
        u = f(x, params)
        boundary = f(lib.tensor([0.0], dtype=lib.float64), params) - 0.5
        loss = ((dfdx(x, params) - u * (1 - u)) ** 2).mean() + boundary ** 2
        grads = lib.autograd.grad(loss, params, create_graph=True)
        mu = [0.9 * m + 0.1 * g for m, g in zip(mu, grads)]
        nu = [0.999 * n + 0.001 * g * g for n, g in zip(nu, grads)]
        params = tuple(p - 0.05 * (m / (1 - 0.9 ** t)) / (lib.sqrt(n / (1 - 0.999 ** t)) + 1e-8)
                       for p, m, n in zip(params, mu, nu))
        losses.append(float(loss.detach()))
    last = params[0].sum()  # the last parameters still differentiate back to the first ones
    return losses, lib.autograd.grad(last, params[0])[0].detach().numpy()


@pytest.mark.torch
def test_functional_optimiser_chain_matches_torch():
    torch = pytest.importorskip("torch")
    ours, d_ours = _functional_adam_losses(mt)
    theirs, d_theirs = _functional_adam_losses(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    np.testing.assert_allclose(d_ours, d_theirs)


def test_functional_call_is_torch_funcs():
    assert functional_call is mt.func.functional_call


@pytest.mark.torch
def test_math_constants_are_pytorchs():
    torch = pytest.importorskip("torch")
    for name in ("e", "pi", "inf", "nan", "newaxis"):
        ours, theirs = getattr(mt, name), getattr(torch, name)
        assert type(ours) is type(theirs) and (ours == theirs or (ours != ours and theirs != theirs)), name
        assert name in mt.__all__
    assert mt.pi == math.pi and mt.zeros(3)[mt.newaxis].shape == (1, 3)


def test_a_transforms_floor_stays_in_its_thread():
    import threading
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = _history(x, 5)
    got = []
    with engine.pruned_below(10 ** 15):  # would prune every node here, were it seen by the other thread
        worker = threading.Thread(target=lambda: got.append(mt.autograd.grad(y.sum(), x)[0]))
        worker.start()
        worker.join()
    np.testing.assert_allclose(got[0].numpy(), np.full(2, 1.001 ** 5, dtype=np.float32), rtol=1e-6)


def test_a_backward_run_inside_a_transform_walks_its_own_older_graph_whole():
    """A custom Function whose backward differentiates a graph made before the transform (its own
    autograd.grad, run while torch.func's gradient is computed) gets that graph's full gradient."""
    w = mt.tensor([3.0], requires_grad=True)
    old = (w * w).sum()  # made before the transform: its nodes are older than the transform's floor

    class ScaleByOldGradient(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            dw, = mt.autograd.grad(old, w, retain_graph=True)  # d(w^2)/dw = 6
            return g * dw

    out = grad(lambda x: ScaleByOldGradient.apply(x).sum())(mt.tensor([1.0, 2.0]))
    assert out.tolist() == [6.0, 6.0]
