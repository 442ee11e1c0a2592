"""minitensor.func (torch.func): grad, vmap, functional_call and the Jacobians, against closed forms and
finite differences (no torch needed)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap)


def t64(a):
    return mt.tensor(np.asarray(a, dtype=np.float64))


def test_grad_closed_form_and_second_derivative():
    x = t64(0.7)
    f = lambda x: mt.sin(x) * x  # noqa: E731
    assert np.isclose(grad(f)(x).item(), np.cos(0.7) * 0.7 + np.sin(0.7))
    assert np.isclose(grad(grad(f))(x).item(), -np.sin(0.7) * 0.7 + 2 * np.cos(0.7))
    assert np.isclose(grad(grad(grad(f)))(x).item(), -np.cos(0.7) * 0.7 - 3 * np.sin(0.7))


def test_grad_argnums_tuple_dict_and_aux():
    x, y = t64([1.0, 2.0]), t64([3.0, -1.0])
    gx, gy = grad(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx.numpy(), 2 * x.numpy() * y.numpy())
    np.testing.assert_allclose(gy.numpy(), x.numpy() ** 2)
    g = grad(lambda p: (p["w"] * p["b"]).sum())({"w": x, "b": y})
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(g["w"].numpy(), y.numpy())
    g1, aux = grad(lambda a: ((a ** 2).sum(), a * 3), has_aux=True)(x)
    np.testing.assert_allclose(g1.numpy(), 2 * x.numpy())
    np.testing.assert_allclose(aux.detach().numpy(), 3 * x.numpy())
    (g2, (value, aux2)) = grad_and_value(lambda a: ((a ** 2).sum(), "note"), has_aux=True)(x)
    assert np.isclose(value.item(), 5.0) and aux2 == "note"
    gy_only = grad(lambda a, b: (a * b).sum(), argnums=-1)(x, y)
    np.testing.assert_allclose(gy_only.numpy(), x.numpy())


def test_grad_unused_input_is_zero_and_errors():
    x = t64([1.0, 2.0])
    np.testing.assert_allclose(grad(lambda a, b: (b * 2).sum(), argnums=0)(x, x).numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="scalar Tensor"):
        grad(lambda a: a * 2)(x)
    with pytest.raises(RuntimeError, match="argnums"):
        grad(lambda a: a.sum(), argnums=3)(x)


def test_nested_levels_do_not_confuse_perturbations():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1, not 2
    assert grad(lambda x: x * grad(lambda y: x + y)(x))(t64(3.0)).item() == 1.0


def test_grad_runs_under_outer_no_grad_and_flows_to_closed_over_parameters():
    w = mt.tensor(2.0, dtype=mt.float64, requires_grad=True)
    with mt.no_grad():
        assert grad(lambda x: x ** 3)(t64(2.0)).item() == 12.0
    # a PINN's loss holds derivatives of the net w.r.t. x; training needs their gradient w.r.t. w
    loss = grad(lambda x: w * x ** 2)(t64(3.0))  # 2 w x
    loss.backward()
    assert w.grad.item() == 6.0


def test_vmap_loop_semantics_reductions_reshape_and_in_dims():
    x = t64(np.arange(12.0).reshape(3, 4))
    np.testing.assert_allclose(vmap(lambda r: r.sum())(x).numpy(), x.numpy().sum(1))
    np.testing.assert_allclose(vmap(lambda r: r.reshape(2, 2).sum(0))(x).numpy(),
                               x.numpy().reshape(3, 2, 2).sum(1))
    np.testing.assert_allclose(vmap(lambda c: c.mean(), in_dims=1)(x).numpy(), x.numpy().mean(0))
    v = t64([1.0, -1.0, 2.0, 0.5])
    np.testing.assert_allclose(vmap(lambda r, v: r @ v, in_dims=(0, None))(x, v).numpy(), x.numpy() @ v.numpy())
    out = vmap(lambda r: (r * 2, r.sum()), out_dims=(1, 0))(x)
    assert tuple(out[0].shape) == (4, 3) and tuple(out[1].shape) == (3,)
    nested = vmap(vmap(lambda s: s * s))(x)
    np.testing.assert_allclose(nested.numpy(), x.numpy() ** 2)
    d = vmap(lambda p: p["a"] + p["b"], in_dims=({"a": 0, "b": None},))({"a": x, "b": v})
    np.testing.assert_allclose(d.numpy(), x.numpy() + v.numpy())


def test_vmap_errors_and_randomness():
    x = t64(np.ones((3, 2)))
    with pytest.raises(ValueError, match="same size"):
        vmap(lambda a, b: a + b)(x, t64(np.ones((4, 2))))
    with pytest.raises(ValueError, match="in_dim"):
        vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda a: a + mt.randn(2))(x)
    same = vmap(lambda a: a + mt.randn(2), randomness="same")(x)
    np.testing.assert_array_equal(same[0].numpy(), same[1].numpy())
    different = vmap(lambda a: a + mt.randn(2), randomness="different")(x)
    assert not np.array_equal(different[0].numpy(), different[1].numpy())
    with pytest.raises(ValueError, match="chunk_size"):
        vmap(lambda a: a, chunk_size=0)


def test_gradient_flows_through_vmap():
    x = mt.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    vmap(lambda r: (r ** 2).sum())(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


class _Net(mt.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = mt.nn.Linear(1, 8, dtype=mt.float64)
        self.l2 = mt.nn.Linear(8, 1, dtype=mt.float64)

    def forward(self, x):
        return self.l2(mt.tanh(self.l1(x.reshape(-1, 1)))).squeeze()


def test_functional_call_swaps_and_restores_even_on_error():
    mt.manual_seed(0)
    net = _Net()
    originals = {k: v for k, v in net.named_parameters()}
    params = {k: (v.detach() * 0.5).requires_grad_() for k, v in originals.items()}
    x = t64([0.3])
    out = functional_call(net, params, (x,))
    h = np.tanh(0.3 * params["l1.weight"].detach().numpy()[:, 0] + params["l1.bias"].detach().numpy())
    expected = h @ params["l2.weight"].detach().numpy()[0] + params["l2.bias"].item()
    assert np.isclose(out.item(), expected)
    out.backward()
    assert params["l2.bias"].grad.item() == 1.0 and originals["l2.bias"].grad is None
    assert all(net.get_parameter(k) is v for k, v in originals.items()) if hasattr(net, "get_parameter") else True
    assert dict(net.named_parameters()).keys() == originals.keys()
    assert all(dict(net.named_parameters())[k] is v for k, v in originals.items())

    class Boom(mt.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mt.nn.Linear(2, 2)

        def forward(self, x):
            raise ValueError("boom")
    boom = Boom()
    w = boom.lin.weight
    with pytest.raises(ValueError, match="boom"):
        functional_call(boom, {"lin.weight": mt.zeros(2, 2)}, (mt.ones(2),))
    assert boom.lin.weight is w and isinstance(boom.lin.weight, mt.nn.Parameter)


def test_functional_call_keys_ties_buffers_and_strict():
    bn = mt.nn.BatchNorm1d(2)
    bn.eval()
    mean = t64([1.0, -1.0]).float()
    out = functional_call(bn, ({"running_mean": mean}, {}), (mt.zeros(3, 2),))
    np.testing.assert_allclose(out[0].detach().numpy(), -mean.numpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    assert bn.running_mean.abs().sum().item() == 0.0
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(bn, {"weight": mt.ones(2)}, (mt.zeros(3, 2),), strict=True)
    with pytest.raises(ValueError, match="multiple dictionaries"):
        functional_call(bn, ({"weight": mt.ones(2)}, {"weight": mt.ones(2)}), (mt.zeros(3, 2),))

    class Tied(mt.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = mt.nn.Linear(2, 2, bias=False)
            self.b = mt.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    tied = Tied()
    w = 2 * mt.eye(2)
    np.testing.assert_allclose(functional_call(tied, {"a.weight": w}, mt.ones(2)).detach().numpy(), [4.0, 4.0])
    with pytest.raises(ValueError, match="tied"):
        functional_call(tied, {"a.weight": w, "b.weight": mt.eye(2)}, mt.ones(2))
    np.testing.assert_allclose(functional_call(tied, {"a.weight": w, "b.weight": mt.eye(2)}, mt.ones(2),
                                               tie_weights=False).detach().numpy(), [2.0, 2.0])


def test_stateless_functional_call_is_the_deprecated_alias():
    lin = mt.nn.Linear(2, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = mt.nn.utils.stateless.functional_call(lin, {"weight": mt.ones(1, 2), "bias": mt.zeros(1)},
                                                    (mt.tensor([1.0, 2.0]),))
    assert out.item() == 3.0 and any(issubclass(w.category, FutureWarning) for w in caught)


def test_pinn_residual_u_xx_plus_u_via_grad_of_grad_and_vmap():
    """u = a sin x + b cos x solves u'' + u = 0: the residual is 0 at every point; a wrong u is not."""
    net = mt.nn.Linear(2, 1, bias=False, dtype=mt.float64)

    def u(x, params):
        feats = mt.stack([mt.sin(x), mt.cos(x)]).reshape(1, 2)
        return functional_call(net, params, (feats,)).squeeze()

    params = {"weight": t64([[0.8, -1.3]]).requires_grad_()}
    u_xx = vmap(grad(grad(u)), in_dims=(0, None))
    xs = t64(np.linspace(-2, 2, 7))
    residual = u_xx(xs, params) + vmap(u, in_dims=(0, None))(xs, params)
    np.testing.assert_allclose(residual.detach().numpy(), 0.0, atol=1e-12)
    # (x^2 sin x)'' = 2 sin x + 4 x cos x - x^2 sin x
    xn = xs.numpy()
    np.testing.assert_allclose(vmap(grad(grad(lambda x: x ** 2 * x.sin())))(xs).numpy(),
                               2 * np.sin(xn) + 4 * xn * np.cos(xn) - xn ** 2 * np.sin(xn))
    # the residual loss trains the parameters: its gradient w.r.t. them is finite and matches FD
    def loss(w):
        p = {"weight": w}
        return ((u_xx(xs, p) + 0.5 * vmap(u, in_dims=(0, None))(xs, p)) ** 2).mean()
    w0 = t64([[0.8, -1.3]])
    g = grad(loss)(w0).detach().numpy()
    eps = 1e-6
    fd = [(loss(w0 + eps * t64(e)).item() - loss(w0 - eps * t64(e)).item()) / (2 * eps)
          for e in np.eye(2).reshape(2, 1, 2)]
    np.testing.assert_allclose(g[0], fd, rtol=1e-6)


def test_vjp_jvp_jacobians_hessian_against_closed_forms():
    x = t64([0.5, -1.0, 2.0])
    A = t64(np.arange(6.0).reshape(2, 3))
    f = lambda x: A @ mt.sin(x)  # noqa: E731
    J = A.numpy() * np.cos(x.numpy())
    np.testing.assert_allclose(jacrev(f)(x).detach().numpy(), J)
    np.testing.assert_allclose(jacfwd(f)(x).detach().numpy(), J)
    out, fn = vjp(f, x)
    (vj,) = fn(t64([1.0, 2.0]))
    np.testing.assert_allclose(vj.detach().numpy(), np.array([1.0, 2.0]) @ J)
    np.testing.assert_allclose(fn(t64([1.0, 0.0]))[0].detach().numpy(), J[0])  # callable again
    value, jv = jvp(f, (x,), (t64([1.0, 0.0, -1.0]),))
    np.testing.assert_allclose(jv.detach().numpy(), J @ np.array([1.0, 0.0, -1.0]))
    np.testing.assert_allclose(value.detach().numpy(), out.detach().numpy())
    h = hessian(lambda x: (x ** 3).sum() + x[0] * x[1])(x).detach().numpy()
    np.testing.assert_allclose(h, np.diag(6 * x.numpy()) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    jx, jy = jacrev(lambda a, b: a * b, argnums=(0, 1))(x, x * 2)
    np.testing.assert_allclose(jx.detach().numpy(), np.diag(2 * x.numpy()))
    assert tuple(jacrev(lambda m: m.sum(0))(A).shape) == (3, 2, 3)


def test_second_derivative_of_ops_saving_their_output_on_0d_slices():
    """vmap hands grad 0-d slices; NumPy's 0-d exp/tanh/sigmoid return scalars, and the saved output must
    still be linked to the result for the double backward (it raised NotImplementedError)."""
    xs = t64(np.linspace(-1.5, 1.5, 5))
    xn = xs.numpy()
    got = vmap(grad(grad(lambda x: x.exp() + mt.tanh(x) + mt.sigmoid(x) + (x + 2).sqrt())))(xs).numpy()
    th, sg = np.tanh(xn), 1 / (1 + np.exp(-xn))
    expected = np.exp(xn) - 2 * th * (1 - th ** 2) + sg * (1 - sg) * (1 - 2 * sg) - 0.25 * (xn + 2) ** -1.5
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_stack_module_state_ensembles_through_vmap():
    mt.manual_seed(1)
    models = [mt.nn.Linear(3, 2, dtype=mt.float64) for _ in range(4)]
    params, buffers = mt.func.stack_module_state(models)
    assert tuple(params["weight"].shape) == (4, 2, 3) and params["weight"].is_leaf and params["weight"].requires_grad
    data = t64(np.arange(15.0).reshape(5, 3))
    out = vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(params, buffers, data)
    expected = np.stack([data.numpy() @ m.weight.detach().numpy().T + m.bias.detach().numpy() for m in models])
    np.testing.assert_allclose(out.detach().numpy(), expected)
    out.sum().backward()
    np.testing.assert_allclose(params["bias"].grad.numpy(), np.full((4, 2), 5.0))
    with pytest.raises(RuntimeError, match="same class"):
        mt.func.stack_module_state([models[0], mt.nn.Identity()])
