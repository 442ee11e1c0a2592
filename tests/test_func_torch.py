"""minitensor.func against torch.func on the same functions and weights."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.torch


def _pair(torch, a):
    a = np.asarray(a, dtype=np.float64)
    return mt.tensor(a), torch.tensor(a)


def _mlp(lib, W1, b1, W2, b2):
    """basic-pinn's LinearNN shape: Linear(1, n), tanh, Linear(n, 1), forward(x) = net(x.reshape(-1, 1)).squeeze()."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.network = lib.nn.Sequential(lib.nn.Linear(1, W1.shape[0]), lib.nn.Tanh(),
                                             lib.nn.Linear(W1.shape[0], 1))

        def forward(self, x):
            return self.network(x.reshape(-1, 1)).squeeze()
    net = Net().double()
    for p, v in zip(net.parameters(), (W1, b1, W2, b2)):
        p.data = lib.tensor(v)
    return net


def _weights():
    rng = np.random.default_rng(0)
    return rng.normal(size=(5, 1)), rng.normal(size=5), rng.normal(size=(1, 5)), rng.normal(size=1)


def test_pinn_program_derivatives_and_loss_gradient_match_torch():
    torch = pytest.importorskip("torch")
    ws = _weights()
    results = []
    for lib in (mt, torch):
        net = _mlp(lib, *ws)

        def f(x, params, lib=lib, net=net):
            return lib.func.functional_call(net, params, (x,))
        d1 = lib.func.vmap(lib.func.grad(f), in_dims=(0, None))
        d2 = lib.func.vmap(lib.func.grad(lib.func.grad(f)), in_dims=(0, None))
        x = lib.tensor(np.linspace(-1, 1, 6))
        params = dict(net.named_parameters())
        u, ux, uxx = f(x, params), d1(x, params), d2(x, params)
        loss = ((uxx + u) ** 2).mean() + (ux ** 2).mean()
        grads = lib.autograd.grad(loss, list(params.values()))
        results.append([u.detach().numpy(), ux.detach().numpy(), uxx.detach().numpy(),
                        *[g.detach().numpy() for g in grads]])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_transforms_match_torch_func():
    torch = pytest.importorskip("torch")
    (xm, xt), (Am, At) = _pair(torch, [0.3, -1.2, 2.0]), _pair(torch, np.arange(6.0).reshape(2, 3) / 5)

    def cases(lib, x, A):
        F = lib.func
        f = lambda x: A @ lib.tanh(x) * x[0]  # noqa: E731
        s = lambda x, y: (lib.sin(x) * y).sum() ** 2  # noqa: E731
        out, vjp_fn = F.vjp(f, x)
        return [F.jacrev(f)(x), F.jacfwd(f)(x), F.hessian(lambda x: s(x, x))(x),
                *F.grad(s, argnums=(0, 1))(x, 2 * x),
                F.grad(lambda x: F.grad(lambda y: (lib.sin(y) * y).sum())(x).sum())(x),
                out, vjp_fn(lib.ones(2, dtype=x.dtype))[0], *F.jvp(f, (x,), (lib.ones(3, dtype=x.dtype),)),
                F.vmap(lambda r: r @ r, in_dims=1)(A), F.vmap(F.grad(lambda r: (r ** 3).sum()))(A),
                F.vmap(lambda r, v: r * v, in_dims=(0, None), out_dims=1)(A, x)]
    for a, b in zip(cases(mt, xm, Am), cases(torch, xt, At), strict=True):
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_functional_call_and_stateless_match_torch():
    torch = pytest.importorskip("torch")
    ws = _weights()
    outs = []
    for lib in (mt, torch):
        net = _mlp(lib, *ws)
        new = {k: v.detach() * 2 for k, v in net.named_parameters()}
        x = lib.tensor(np.linspace(0, 1, 4))
        a = lib.func.functional_call(net, (new,), x)
        with pytest.warns(FutureWarning):
            b = lib.nn.utils.stateless.functional_call(net, new, (x,))
        with pytest.raises(RuntimeError) as err:
            lib.func.functional_call(net, {"network.0.weight": new["network.0.weight"]}, (x,), strict=True)
        outs.append((a.detach().numpy(), b.detach().numpy(), str(err.value).split(":\n")[1]))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)
    assert outs[0][2] == outs[1][2]


def _edge_cases(lib):
    F, x = lib.func, lib.tensor([1.0, 2.0, 3.0])
    w = lib.tensor(2.0, requires_grad=True)
    return {
        "inplace on the input": lambda: F.grad(lambda x: x.mul_(2).sum())(x.clone()),
        "integer input": lambda: F.grad(lambda x: x.sum())(lib.tensor([1, 2])),
        "kwargs pass through": lambda: F.grad(lambda x, s=1.0: (x * s).sum())(x, s=3.0),
        "negative dims": lambda: F.vmap(lambda r: r * 2, in_dims=-1, out_dims=-1)(lib.ones(2, 3) * x[:2, None]),
        "nested in_dims": lambda: F.vmap(lambda t: t[0] + t[1], in_dims=((0, None),))((lib.ones(2, 3), x)),
        "unbatched output": lambda: F.vmap(lambda r: (r * 2, lib.ones(2)), out_dims=(0, None))(lib.ones(2, 3))[1],
        "non-tensor output": lambda: F.vmap(lambda r: 3.0)(lib.ones(2, 3)),
        "0-d mapped input": lambda: F.vmap(lambda r: r)(lib.tensor(1.0)),
        "0-d jacrev": lambda: F.jacrev(lambda r: r.sin())(lib.tensor(1.0)),
        "hessian of a dict": lambda: F.hessian(lambda p: (p["a"] ** 3).sum())({"a": x})["a"]["a"],
        "constant output": lambda: F.grad(lambda r: lib.tensor(1.0))(x),
        "vjp of a tuple": lambda: F.vjp(lambda r: (r * 2, r.sum()), x)[1]((lib.ones(3), lib.tensor(1.0)))[0],
        "jvp aux": lambda: F.jvp(lambda r: (r * 2, r), (x,), (x,), has_aux=True)[2],
        "input requiring grad": lambda: F.grad(lambda r: (r ** 3).sum())(x.clone().requires_grad_()),
        "closed-over weight": lambda: F.hessian(lambda r: (w * r ** 3).sum())(x),
    }


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001  (the error's type is what is compared)
        return type(e).__name__
    return r.detach().numpy(), tuple(r.shape), r.requires_grad


@pytest.mark.parametrize("case", list(_edge_cases(mt)))
def test_edge_cases_match_torch(case):
    torch = pytest.importorskip("torch")
    ours, theirs = _outcome(_edge_cases(mt)[case]), _outcome(_edge_cases(torch)[case])
    if isinstance(theirs, str):
        assert ours == theirs  # the same error
        return
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)  # float32: cos's last bits differ
    assert ours[1:] == theirs[1:]
