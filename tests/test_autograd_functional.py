"""minitensor.autograd.functional.jacobian / vjp and minitensor.autograd.gradcheck: known Jacobians, finite
differences, PyTorch's structure of results and errors, and parity with torch."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd.functional import jacobian, vjp
from minitensor.testing import GradcheckError


def _numerical_jacobian(f, x0, eps=1e-6):
    """Central differences of a NumPy float64 function: shape f(x).shape + x.shape."""
    cols = []
    for k in range(x0.size):
        d = np.zeros(x0.size)
        d[k] = eps
        cols.append((f(x0 + d.reshape(x0.shape)) - f(x0 - d.reshape(x0.shape))) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(np.shape(f(x0)) + x0.shape)


def test_known_jacobians():
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = mt.tensor(np.linspace(-1.0, 1.0, 4))
    assert np.allclose(jacobian(lambda v: mt.tensor(a) @ v, x).numpy(), a)
    assert np.allclose(jacobian(lambda v: v.sin(), x).numpy(), np.diag(np.cos(x.numpy())))
    assert jacobian(lambda v: v.sum(), x).shape == (4,) and jacobian(lambda v: v, mt.tensor(2.0)).item() == 1.0
    m = mt.tensor(a)
    got = jacobian(lambda t: (t * t).softmax(-1), m).numpy()
    ref = _numerical_jacobian(lambda t: np.exp(t * t) / np.exp(t * t).sum(-1, keepdims=True), a)
    assert got.shape == (3, 4, 3, 4) and np.allclose(got, ref, atol=1e-6)


def test_result_structure_follows_the_arguments():
    x, y = mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0, 5.0])
    by_input = jacobian(lambda a, b: a.sum() * b, (x, y))
    assert isinstance(by_input, tuple) and [t.shape for t in by_input] == [(3, 2), (3, 3)]
    assert np.array_equal(by_input[0].numpy(), [[3.0, 3.0], [4.0, 4.0], [5.0, 5.0]])
    assert np.array_equal(by_input[1].numpy(), 3 * np.eye(3))
    by_output = jacobian(lambda a: (a, a.sum()), x)
    assert isinstance(by_output, tuple) and [t.shape for t in by_output] == [(2, 2), (2,)]
    both = jacobian(lambda a, b: (a, b), (x, y))
    assert [[t.shape for t in row] for row in both] == [[(2, 2), (2, 3)], [(3, 2), (3, 3)]]
    assert not both[0][1].numpy().any() and np.array_equal(both[1][1].numpy(), np.eye(3))
    assert np.array_equal(jacobian(lambda a: a * 2, x, vectorize=True).numpy(), 2 * np.eye(2))


def test_inputs_are_detached_copies():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    w = x * 3
    jacobian(lambda a: a * w.detach(), w)
    out, g = vjp(lambda a: a * 2, w, mt.ones(2))
    assert x.grad is None and not out.requires_grad and not g.requires_grad and w.grad_fn is not None


def test_unused_inputs_and_strict():
    x, y = mt.tensor([1.0, 2.0]), mt.tensor([3.0, 4.0, 5.0])
    zero = jacobian(lambda a, b: a * 2, (x, y))[1]
    assert zero.shape == (2, 3) and not zero.numpy().any()
    assert not jacobian(lambda a: mt.ones(2), x).numpy().any()
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode."):
        jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        jacobian(lambda a: a.detach(), x, strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1"):
        vjp(lambda a, b: a * 2, (x, y), mt.ones(2), strict=True)
    out, g = vjp(lambda a: mt.ones(2), x, mt.ones(2))
    assert np.array_equal(out.numpy(), [1.0, 1.0]) and not g.numpy().any()


def test_vjp_is_v_times_the_jacobian():
    rng = np.random.default_rng(1)
    x, y = mt.tensor(rng.standard_normal((2, 3))), mt.tensor(rng.standard_normal(3))

    def f(a, b):
        return (a * b).tanh(), (a @ b).exp()

    v = (mt.tensor(rng.standard_normal((2, 3))), mt.tensor(rng.standard_normal(2)))
    outs, grads = vjp(f, (x, y), v)
    ref = f(x, y)
    assert all(np.array_equal(o.numpy(), r.numpy()) for o, r in zip(outs, ref))
    jac = jacobian(f, (x, y))
    for j in range(2):
        expect = sum(np.tensordot(v[i].numpy(), jac[i][j].numpy(), axes=v[i].ndim) for i in range(2))
        assert np.allclose(grads[j].numpy(), expect, atol=1e-6)
    out, g = vjp(lambda a: (a * a).sum(), x)  # v may be None for one single-element output
    assert np.allclose(g.numpy(), 2 * x.numpy()) and out.shape == ()
    single = vjp(lambda a: a * 2, (x,), mt.ones(2, 3))[1]
    assert isinstance(single, tuple) and len(single) == 1


@pytest.mark.parametrize("call, error, match", [
    (lambda x: jacobian(lambda a: 3, x), TypeError, "The outputs of the user-provided function given to jacobian must "
                                                    "be either a Tensor or a tuple of Tensors"),
    (lambda x: jacobian(lambda a: a, [x]), TypeError, "The inputs given to jacobian must be either a Tensor or a tuple "
                                                      "of Tensors but the given inputs has type <class 'list'>"),
    (lambda x: jacobian(lambda a: a, 3), TypeError, "has type <class 'int'>"),
    (lambda x: jacobian(lambda a: a * 2, x, strategy="forward-mode"), NotImplementedError, "forward-mode"),
    (lambda x: jacobian(lambda a: a * 2, x, strategy="bad"), AssertionError, "Expected strategy"),
    (lambda x: vjp(lambda a: a * 2, x), RuntimeError, "v can only be None if the user-provided function returns a "
                                                      "single Tensor with a single element"),
    (lambda x: vjp(lambda a: a * 2, x, mt.ones(3)), RuntimeError, "v has invalid size: should be"),
    (lambda x: vjp(lambda a: (a, a), x, mt.ones(2)), RuntimeError, "v is a tuple of invalid length: should be 2 but "
                                                                   "got 1"),
    (lambda x: vjp(lambda a: (a, a), x, (mt.ones(2), mt.ones(1))), RuntimeError, "Entry 1 in v has invalid size"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(mt.tensor([1.0, 2.0]))


def test_integer_inputs_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        jacobian(lambda a: a, mt.tensor([1, 2]))


# --------------------------------------------------------------------------------------------------- gradcheck
class WrongGrad(mt.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def test_autograd_gradcheck_takes_pytorch_keywords():
    x = mt.randn(3, dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradcheck(lambda a: a.sin() * a, x, eps=1e-6, atol=1e-5, rtol=1e-3, nondet_tol=0.0,
                                 check_undefined_grad=True, check_grad_dtypes=True, fast_mode=False)
    assert mt.autograd.gradcheck(WrongGrad.apply, (x,), raise_exception=False) is False
    with pytest.raises(RuntimeError, match="3 of 3 entries differ"):  # GradcheckError is a RuntimeError
        mt.autograd.gradcheck(WrongGrad.apply, (x,))
    with pytest.raises(GradcheckError):
        mt.autograd.gradcheck(WrongGrad.apply, (x,), fast_mode=True)
    assert mt.autograd.gradcheck(WrongGrad.apply, (x,), check_backward_ad=False)  # nothing left to check
    with pytest.raises(ValueError, match="no input requires grad"):
        mt.autograd.gradcheck(lambda a: a * 2, mt.ones(2, dtype=mt.float64))
    for name in ("check_batched_grad", "check_batched_forward_grad"):
        with pytest.raises(NotImplementedError, match=name):
            mt.autograd.gradcheck(lambda a: a * 2, x, **{name: True})


class WrongJvp(mt.autograd.Function):
    """exp whose jvp is off by a factor 2 (its backward is right)."""

    @staticmethod
    def forward(ctx, a):
        ctx.result = a.exp()
        return ctx.result

    @staticmethod
    def backward(ctx, g):
        return g * ctx.result

    @staticmethod
    def jvp(ctx, t):
        return 2 * t * ctx.result


def test_gradcheck_check_forward_ad_compares_tangents_with_finite_differences():
    x = mt.randn(2, 3, dtype=mt.float64, requires_grad=True)
    y = mt.randn(3, dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradcheck(lambda a, b: (a * b).sin().sum(0), (x, y), check_forward_ad=True)
    assert mt.autograd.gradcheck(WrongJvp.apply, (x,))  # the backward alone is right
    with pytest.raises(GradcheckError, match="forward AD"):
        mt.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    assert mt.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, raise_exception=False) is False


# --------------------------------------------------------------------------------------------------- torch
CASES = [
    (lambda lib, a, b: (a * b).tanh(), False),
    (lambda lib, a, b: (a @ b.unsqueeze(-1)).exp(), False),
    (lambda lib, a, b: ((a * a).sum(), b.cumsum(0)), True),
]


@pytest.mark.torch
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torch(case):
    torch = pytest.importorskip("torch")
    from torch.autograd import functional as TF
    f, tuple_out = CASES[case]
    rng = np.random.default_rng(case)
    a0, b0 = rng.standard_normal((2, 3)), rng.standard_normal(3)
    ours = jacobian(lambda a, b: f(mt, a, b), (mt.tensor(a0), mt.tensor(b0)))
    theirs = TF.jacobian(lambda a, b: f(torch, a, b), (torch.tensor(a0), torch.tensor(b0)))
    flat = (lambda j: [t for row in j for t in row]) if tuple_out else list
    assert all(np.allclose(o.numpy(), t.numpy()) for o, t in zip(flat(ours), flat(theirs)))
    out = f(mt, mt.tensor(a0), mt.tensor(b0)) if not tuple_out else None
    if out is not None:
        v0 = rng.standard_normal(np.shape(out))
        (_, g), (_, tg) = (vjp(lambda a, b: f(mt, a, b), (mt.tensor(a0), mt.tensor(b0)), mt.tensor(v0)),
                           TF.vjp(lambda a, b: f(torch, a, b), (torch.tensor(a0), torch.tensor(b0)), torch.tensor(v0)))
        assert all(np.allclose(o.numpy(), t.numpy()) for o, t in zip(g, tg))
