"""Second-order training programs against PyTorch, in float64 to 1e-7: WGAN-GP's gradient penalty, a Hessian-vector
product of an MLP, MAML's meta-gradient, and a physics-informed net's d2u/dx2 residual."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

TOL = dict(rtol=1e-7, atol=1e-9)


def _pair(rng: np.random.Generator, *shape: int, scale: float = 0.5) -> tuple[mt.Tensor, "torch.Tensor"]:
    a = rng.standard_normal(shape) * scale
    return (mt.tensor(a, dtype=mt.float64, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


def _params(rng: np.random.Generator, shapes: list[tuple[int, ...]]) -> tuple[list[mt.Tensor], list["torch.Tensor"]]:
    pairs = [_pair(rng, *s) for s in shapes]
    return [p for p, _ in pairs], [q for _, q in pairs]


def _close(ours: list[mt.Tensor], theirs: list["torch.Tensor"]) -> None:
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)


def _critic(lib: object, x: object, p: list) -> object:
    """A DCGAN-shaped critic without batch norm: two strided convolutions with leaky ReLU, then a linear."""
    F = lib.nn.functional  # type: ignore[attr-defined]
    h = F.leaky_relu(F.conv2d(x, p[0], p[1], stride=2, padding=1), 0.2)
    h = F.leaky_relu(F.conv2d(h, p[2], p[3], stride=2, padding=1), 0.2)
    return F.linear(h.reshape(h.shape[0], -1), p[4], p[5])


def test_wgan_gp_penalty_gradient():
    rng = np.random.default_rng(0)
    ours, theirs = _params(rng, [(4, 1, 4, 4), (4,), (8, 4, 4, 4), (8,), (1, 32), (1,)])
    real, fake, eps = rng.standard_normal((3, 1, 8, 8)), rng.standard_normal((3, 1, 8, 8)), rng.random((3, 1, 1, 1))
    hat = eps * real + (1 - eps) * fake
    results = []
    for lib, p in ((mt, ours), (torch, theirs)):
        x_hat = lib.tensor(hat, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(_critic(lib, x_hat, p).sum(), x_hat, create_graph=True)
        penalty = ((g.reshape(3, -1).norm(2, dim=1) - 1) ** 2).mean() * 10
        (_critic(lib, x_hat.detach(), p).mean() + penalty).backward()
        results.append((penalty, [q.grad for q in p]))
    np.testing.assert_allclose(results[0][0].item(), results[1][0].item(), **TOL)
    _close(results[0][1], results[1][1])


def test_mlp_hessian_vector_product():
    rng = np.random.default_rng(1)
    ours, theirs = _params(rng, [(5, 3), (5,), (2, 5), (2,)])
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    v = [rng.standard_normal(p.shape) for p in ours]

    def loss(lib: object, *p: object) -> object:
        F = lib.nn.functional  # type: ignore[attr-defined]
        X = lib.tensor(x, dtype=lib.float64)  # type: ignore[attr-defined]
        h = lib.tanh(F.linear(X, p[0], p[1]))  # type: ignore[attr-defined]
        return F.mse_loss(F.linear(h, p[2], p[3]), lib.tensor(t, dtype=lib.float64))  # type: ignore[attr-defined]

    _, hv = mt.autograd.functional.hvp(lambda *p: loss(mt, *p), tuple(ours), tuple(mt.tensor(a) for a in v))
    _, tv = torch.autograd.functional.hvp(lambda *p: loss(torch, *p), tuple(theirs), tuple(torch.tensor(a) for a in v))
    _close(list(hv), list(tv))
    # the same product by hand: grad of (grad . v)
    gs = mt.autograd.grad(loss(mt, *ours), ours, create_graph=True)
    by_hand = mt.autograd.grad(sum((g * mt.tensor(a)).sum() for g, a in zip(gs, v)), ours)
    _close(list(by_hand), list(tv))


def test_maml_meta_gradient():
    rng = np.random.default_rng(2)
    ours, theirs = _params(rng, [(8, 1), (8,), (1, 8), (1,)])
    xs, xq = rng.uniform(-3, 3, (5, 1)), rng.uniform(-3, 3, (5, 1))
    ys, yq = np.sin(xs), np.sin(xq)

    def net(lib: object, x: object, p: list) -> object:
        F = lib.nn.functional  # type: ignore[attr-defined]
        return F.linear(lib.tanh(F.linear(x, p[0], p[1])), p[2], p[3])  # type: ignore[attr-defined]

    grads = []
    for lib, p in ((mt, ours), (torch, theirs)):
        T = lambda a: lib.tensor(a, dtype=lib.float64)  # noqa: E731
        inner = lib.nn.functional.mse_loss(net(lib, T(xs), p), T(ys))
        g = lib.autograd.grad(inner, p, create_graph=True)
        adapted = [w - 0.1 * gw for w, gw in zip(p, g)]  # one inner SGD step, differentiable
        meta = lib.nn.functional.mse_loss(net(lib, T(xq), adapted), T(yq))
        grads.append(lib.autograd.grad(meta, p))
    _close(list(grads[0]), list(grads[1]))


def test_pinn_residual_loss():
    rng = np.random.default_rng(3)
    ours, theirs = _params(rng, [(6, 1), (6,), (6, 6), (6,), (1, 6), (1,)])
    xs = rng.uniform(-1, 1, (7, 1))
    results = []
    for lib, p in ((mt, ours), (torch, theirs)):
        F = lib.nn.functional
        x = lib.tensor(xs, dtype=lib.float64, requires_grad=True)
        u = F.linear(lib.tanh(F.linear(lib.tanh(F.linear(x, p[0], p[1])), p[2], p[3])), p[4], p[5])
        du, = lib.autograd.grad(u.sum(), x, create_graph=True)
        d2u, = lib.autograd.grad(du.sum(), x, create_graph=True)
        residual = d2u + np.pi ** 2 * lib.sin(np.pi * x)  # u'' = -pi^2 sin(pi x)
        loss = (residual ** 2).mean() + (u[:1] ** 2).sum()
        loss.backward()
        results.append((loss, [q.grad for q in p]))
    np.testing.assert_allclose(results[0][0].item(), results[1][0].item(), **TOL)
    _close(results[0][1], results[1][1])


def test_functional_second_order_api():
    from minitensor.autograd import functional as AF
    from torch.autograd import functional as TF
    rng = np.random.default_rng(4)
    x0, w0, v0 = rng.standard_normal((2, 3)), rng.standard_normal((3, 2)), rng.standard_normal((3, 2))

    def f(lib: object, x: object, w: object) -> object:
        return (lib.tanh(x @ w) ** 2).sum()  # type: ignore[attr-defined]
    ours, theirs = (mt.tensor(x0), mt.tensor(w0)), (torch.tensor(x0), torch.tensor(w0))
    h, th = AF.hessian(lambda *a: f(mt, *a), ours), TF.hessian(lambda *a: f(torch, *a), theirs)
    _close([h[i][j] for i in range(2) for j in range(2)], [th[i][j] for i in range(2) for j in range(2)])
    for name in ("hvp", "vhp"):
        _, a = getattr(AF, name)(lambda w: f(mt, ours[0], w), ours[1], mt.tensor(v0))
        _, b = getattr(TF, name)(lambda w: f(torch, theirs[0], w), theirs[1], torch.tensor(v0))
        _close([a], [b])
    _, a = AF.jvp(lambda w: mt.tanh(ours[0] @ w), ours[1], mt.tensor(v0))
    _, b = TF.jvp(lambda w: torch.tanh(theirs[0] @ w), theirs[1], torch.tensor(v0))
    _close([a], [b])
    w = mt.tensor(w0, requires_grad=True)
    jac = AF.jacobian(lambda w: mt.tanh(ours[0] @ w), w, create_graph=True)
    assert jac.requires_grad
    gw, = mt.autograd.grad((jac ** 2).sum(), w)
    W = torch.tensor(w0, requires_grad=True)
    tgw, = torch.autograd.grad((TF.jacobian(lambda w: torch.tanh(theirs[0] @ w), W, create_graph=True) ** 2).sum(), W)
    _close([gw], [tgw])
