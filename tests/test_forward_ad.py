"""autograd.forward_ad: dual levels, make_dual / unpack_dual, exact tangents (finite differences, torch)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.autograd.forward_ad as fwAD
import minitensor.nn.functional as F

from helpers import assert_close

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5))
T = rng.standard_normal((4, 5))
W = rng.standard_normal((5, 3))
W2 = rng.standard_normal((3, 2))


def elementwise(lib, x):
    return (x.sin() * x.exp() + x.tanh() / (1 + x * x)).sigmoid() ** 2


def matmul(lib, x):
    return (x @ lib.tensor(W)).relu() @ lib.tensor(W2)


def reductions(lib, x):
    return x.sum(0) * x.mean(1, keepdim=True) + x.amax(1, keepdim=True) + (x * x).sum().sqrt()


def softmax(lib, x):
    return lib.log_softmax(x * 3, dim=-1) if lib is not mt else F.log_softmax(x * 3, dim=-1)


def mlp(lib, x):
    h = (x @ lib.tensor(W)).tanh()
    return (h @ lib.tensor(W2)).softmax(-1)


FUNCS = [elementwise, matmul, reductions, softmax, mlp]


def _tangent(f, x, t):
    with fwAD.dual_level():
        y = f(mt, fwAD.make_dual(mt.tensor(x), mt.tensor(t)))
        primal, tangent = fwAD.unpack_dual(y)
    return primal.numpy(), tangent.numpy()


@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.__name__)
def test_tangent_matches_finite_differences(f):
    primal, tangent = _tangent(f, X, T)
    eps = 1e-6
    plus = f(mt, mt.tensor(X + eps * T)).numpy()
    minus = f(mt, mt.tensor(X - eps * T)).numpy()
    assert_close(mt.tensor(primal), f(mt, mt.tensor(X)).numpy(), rtol=1e-12)
    assert_close(mt.tensor(tangent), (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_levels_and_errors():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(mt.ones(2), mt.ones(2))
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(mt.ones(2), mt.ones(3))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(mt.ones(2, dtype=mt.int64), mt.ones(2, dtype=mt.int64))
        x = fwAD.make_dual(mt.ones(2), mt.full((2,), 3.0))
        out = fwAD.unpack_dual(x)
        assert isinstance(out, fwAD.UnpackedDualTensor)
        assert_close(out.tangent, [3.0, 3.0])
        assert not out.primal.requires_grad
        assert fwAD.unpack_dual(mt.ones(1)).tangent is None
        y = x * 2
    assert fwAD.unpack_dual(y).tangent is None  # the level is gone
    level = fwAD.enter_dual_level()
    fwAD.exit_dual_level(level=level)


def test_primal_that_requires_grad_keeps_reverse_mode():
    w = mt.tensor(W, requires_grad=True)
    with fwAD.dual_level():
        wd = fwAD.make_dual(w, mt.ones(5, 3, dtype=mt.float64))
        y = (mt.tensor(X) @ wd).sin()
        primal, tangent = fwAD.unpack_dual(y)
        assert primal.requires_grad
        assert_close(tangent, np.cos(X @ W) * (X @ np.ones((5, 3))), rtol=1e-12)
        y.sum().backward()
    assert_close(w.grad, X.T @ np.cos(X @ W), rtol=1e-12)


def test_two_duals_and_a_constant():
    with fwAD.dual_level():
        a = fwAD.make_dual(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 0.0]))
        b = fwAD.make_dual(mt.tensor([3.0, 4.0]), mt.tensor([0.0, 1.0]))
        c = mt.tensor([5.0, 6.0])
        y = a * b + c
        assert_close(fwAD.unpack_dual(y).tangent, [3.0, 2.0])
        assert_close(fwAD.unpack_dual(c * 2).primal, [10.0, 12.0])
        assert fwAD.unpack_dual(c * 2).tangent is None
        assert fwAD.unpack_dual((a * 2).argmax()).tangent is None  # integer: no tangent
        assert_close(fwAD.unpack_dual(a.detach() * 0 + a.sum() * 0).tangent, [0.0, 0.0])


def test_inplace_on_a_result_of_a_dual():
    with fwAD.dual_level():
        x = fwAD.make_dual(mt.tensor([1.0, 2.0]), mt.tensor([1.0, 1.0]))
        y = x * 2
        y.mul_(x)  # 2 x^2
        assert_close(fwAD.unpack_dual(y).tangent, [4.0, 8.0])
        x.mul_(3.0)  # in place on the dual itself
        assert_close(fwAD.unpack_dual(x).tangent, [3.0, 3.0])
        assert_close(fwAD.unpack_dual(x * x).tangent, [18.0, 36.0])


def test_custom_function_tangent_from_its_backward():
    class Cube(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g

    with fwAD.dual_level():
        x = fwAD.make_dual(mt.tensor([1.0, 2.0]), mt.tensor([1.0, -1.0]))
        assert_close(fwAD.unpack_dual(Cube.apply(x)).tangent, [3.0, -12.0])


@pytest.mark.torch
@pytest.mark.parametrize("f", FUNCS, ids=lambda f: f.__name__)
def test_tangent_matches_torch(f):
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw
    primal, tangent = _tangent(f, X, T)
    with tfw.dual_level():
        y = f(torch, tfw.make_dual(torch.tensor(X), torch.tensor(T)))
        p, t = tfw.unpack_dual(y)
    assert_close(mt.tensor(primal), p.detach().numpy(), rtol=1e-12)
    assert_close(mt.tensor(tangent), t.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_dual_parameters_through_functional_call():
    from minitensor.func import functional_call
    mt.manual_seed(0)
    net = mt.nn.Sequential(mt.nn.Linear(4, 8), mt.nn.Tanh(), mt.nn.Linear(8, 2)).double()
    params = dict(net.named_parameters())
    tans = {k: mt.randn(*v.shape, dtype=mt.float64) for k, v in params.items()}
    x = mt.randn(3, 4, dtype=mt.float64)
    with fwAD.dual_level():
        out = functional_call(net, {k: fwAD.make_dual(v, tans[k]) for k, v in params.items()}, (x,))
        primal, tangent = fwAD.unpack_dual(out)
    assert primal.requires_grad  # the parameters require grad
    eps = 1e-6
    shifted = [functional_call(net, {k: v.detach() + s * eps * tans[k] for k, v in params.items()}, (x,))
               for s in (1, -1)]
    assert_close(tangent, ((shifted[0] - shifted[1]) / (2 * eps)).detach().numpy(), rtol=1e-6, atol=1e-9)


def test_function_jvp_gives_the_tangent_as_torch():
    """A Function's own jvp gives its outputs' tangents (here it has no backward): a tensor input without a
    tangent gets zeros, another argument None; ops after it compose; the ctx's forward attributes are there."""
    got = []

    class Scaled(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k):
            ctx.result = x.exp() * w * k
            return ctx.result

        @staticmethod
        def jvp(ctx, tx, tw, tk):
            got.append((tw.tolist(), tk))
            return tx * ctx.result

    x, w = mt.tensor([0.5, -1.0]), mt.tensor([2.0, 3.0])
    with fwAD.dual_level():
        y = Scaled.apply(fwAD.make_dual(x, mt.tensor([1.0, 2.0])), w, 2.0)
        primal, tangent = fwAD.unpack_dual(y)
        assert not primal.requires_grad  # no tensor of the user's requires grad
        assert_close(tangent, (mt.tensor([1.0, 2.0]) * x.exp() * w * 2).numpy())
        z = y.sin()
        assert_close(fwAD.unpack_dual(z).tangent, (tangent * y.detach().cos()).numpy())
        assert fwAD.unpack_dual(Scaled.apply(x, w, 2.0)).tangent is None  # no dual input: jvp is not called
    assert got == [([0.0, 0.0], None)]


@pytest.mark.torch
def test_function_jvp_matches_torch():
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    def run(lib, ad):
        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                ctx.result = lib.exp(foo)
                return ctx.result

            @staticmethod
            def jvp(ctx, g):
                out = g * ctx.result
                del ctx.result
                return out

        primal = lib.tensor([[0.1, -0.4], [0.3, 1.2]], dtype=lib.float64, requires_grad=True)
        with ad.dual_level():
            out = Fn.apply(ad.make_dual(primal, lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)))
            p, t = ad.unpack_dual(out.tanh())
            return p.requires_grad, t.tolist()

    ours, theirs = run(mt, fwAD), run(torch, tfw)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def _tangent_identity(lib, ad):
    """forward_ad_usage's checks: a tangent laid out as the primal is the dual's tangent itself, even one that
    requires grad; a transposed one (other strides) is a copy."""
    primal = lib.ones(3, 3)
    tangent = lib.arange(9.0).reshape(3, 3)
    with ad.dual_level():
        same = ad.unpack_dual(ad.make_dual(primal, tangent)).tangent is tangent
        transposed = ad.unpack_dual(ad.make_dual(primal, tangent.T))
        with_grad = lib.arange(9.0).reshape(3, 3).requires_grad_()
        kept_grad = ad.unpack_dual(ad.make_dual(primal, with_grad)).tangent is with_grad
        out = ad.unpack_dual(ad.make_dual(primal, tangent) * 2).tangent
    return same, transposed.tangent is tangent, transposed.tangent.tolist(), kept_grad, out.tolist()


@pytest.mark.torch
def test_tangent_kept_itself_as_torch():
    torch = pytest.importorskip("torch")
    ours = _tangent_identity(mt, fwAD)
    theirs = _tangent_identity(torch, torch.autograd.forward_ad)
    assert ours == theirs
    assert ours[0] and not ours[1] and ours[3]
