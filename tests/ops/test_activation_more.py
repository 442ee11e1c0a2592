"""The smaller activations (celu, selu, mish, hardsigmoid, hardswish, logsigmoid, softsign, softmin): their
modules, in-place forms, PyTorch's one-sided gradients at the kinks, and parity with PyTorch where installed.
Forward against NumPy float64 and gradcheck: the REFERENCES table of test_activation.py."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)
INPLACE = [(F.celu, nn.CELU), (F.selu, nn.SELU), (F.mish, nn.Mish), (F.hardsigmoid, nn.Hardsigmoid),
           (F.hardswish, nn.Hardswish)]


@pytest.mark.parametrize("fn, module", INPLACE)
def test_inplace_writes_into_the_input_and_the_module_agrees(fn, module):
    x = mt.tensor(np.linspace(-5, 5, 11))
    expected = fn(x).numpy().copy()
    np.testing.assert_array_equal(module()(x).numpy(), expected)
    assert fn(x, inplace=True) is x
    np.testing.assert_array_equal(x.numpy(), expected)
    z = mt.tensor(np.linspace(-5, 5, 11))
    assert module(inplace=True)(z) is z


@pytest.mark.parametrize("fn", [F.celu, F.selu, F.mish, F.hardsigmoid, F.hardswish, F.celu_, F.selu_])
def test_inplace_keeps_correct_gradients(fn):
    """Their backward reads x, which the in-place write overwrites: it must differentiate a copy."""
    x = np.random.default_rng(3).normal(0, 3, size=20)
    x[np.abs(np.abs(x) - 3) < 0.05] += 0.2
    x[np.abs(x) < 0.05] += 0.2
    call = (lambda t: fn(t)) if fn.__name__.endswith("_") else (lambda t: fn(t, inplace=True))
    gradcheck(lambda t: call(t * 1.0), (mt.tensor(x, dtype=mt.float64, requires_grad=True),))


@pytest.mark.parametrize("fn, expected", [
    (F.hardsigmoid, [0.0, 1 / 6, 1 / 6, 0.0]),  # 0 at -3 and 3 (PyTorch: strictly inside)
    (F.hardswish, [0.0, -1 / 3 + 0.5, 0.5, 1.0]),  # x / 3 + 1/2 strictly inside, 0 at -3, 1 at 3
    (F.celu, [1.0, np.exp(-1.0), 1.0, 1.0]),  # exp(x / alpha), 1 at 0 from both sides
    (F.selu, [SELU[0] * SELU[1], SELU[0] * SELU[1] * np.exp(-1.0), SELU[0] * SELU[1], SELU[1]])])
def test_gradient_at_the_ends_follows_pytorch(fn, expected):
    x = mt.tensor([-3.0, -1.0, 0.0, 3.0], dtype=mt.float64, requires_grad=True)
    if fn in (F.celu, F.selu):
        x = mt.tensor([0.0 if fn is F.selu else 1.0, -1.0, 0.0, 3.0], dtype=mt.float64, requires_grad=True)
    fn(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15)


def test_extreme_inputs_stay_finite_in_float32():
    x = mt.tensor([-1000.0, -80.0, 0.0, 80.0, 1000.0], requires_grad=True)
    for fn in (F.celu, F.selu, F.mish, F.logsigmoid, F.softsign, F.hardswish):
        x.grad = None
        y = fn(x)
        y.sum().backward()
        assert np.isfinite(y.detach().numpy()).all(), fn
        assert np.isfinite(x.grad.numpy()).all(), fn
    np.testing.assert_allclose(F.logsigmoid(x).detach().numpy(), [-1000, -80, -np.log(2), 0, 0], atol=1e-30,
                               rtol=1e-6)


def test_softmin_is_softmax_of_the_negation():
    x = np.random.default_rng(0).normal(0, 3, size=(3, 4))
    e = np.exp(-x - (-x).max(0))
    np.testing.assert_allclose(F.softmin(mt.tensor(x), 0).numpy(), e / e.sum(0), rtol=1e-12)
    np.testing.assert_allclose(nn.Softmin(dim=0)(mt.tensor(x)).numpy(), e / e.sum(0), rtol=1e-12)
    assert F.softmin(mt.tensor(x, dtype=mt.float32), 1, dtype=mt.float64).dtype == mt.float64
    gradcheck(lambda t: F.softmin(t, -1), (mt.tensor(x, requires_grad=True),))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):  # PyTorch's rule: dim 1
        np.testing.assert_allclose(F.softmin(mt.tensor(x)).numpy(), F.softmin(mt.tensor(x), 1).numpy())


def test_celu_rejects_alpha_zero():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        F.celu(mt.randn(3), alpha=0.0)


def test_integer_input_gives_the_default_float():
    for fn in (F.celu, F.selu, F.mish, F.hardsigmoid, F.hardswish, F.logsigmoid, F.softsign):
        assert fn(mt.tensor([-2, 0, 2])).dtype == mt.float32


@pytest.mark.parametrize("module, text", [
    (nn.CELU(), "CELU(alpha=1.0)"), (nn.CELU(2.0, True), "CELU(alpha=2.0, inplace=True)"),
    (nn.SELU(True), "SELU(inplace=True)"), (nn.SELU(), "SELU()"), (nn.Mish(True), "Mish(inplace=True)"),
    (nn.Hardsigmoid(True), "Hardsigmoid()"), (nn.Hardswish(), "Hardswish()"), (nn.LogSigmoid(), "LogSigmoid()"),
    (nn.Softsign(), "Softsign()"), (nn.Softmin(1), "Softmin(dim=1)")])
def test_repr_matches_pytorch(module, text):
    assert repr(module) == text
    assert module.state_dict() == {}


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", [("celu", {"alpha": 0.7}), ("selu", {}), ("mish", {}),
                                          ("hardsigmoid", {}), ("hardswish", {}), ("logsigmoid", {}),
                                          ("softsign", {}), ("softmin", {"dim": 1})])
def test_matches_pytorch(name, kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).normal(0, 4, size=(4, 6))
    x[0, :3] = [-3.0, 3.0, 0.0]
    tx = torch.tensor(x, requires_grad=True)
    ty = getattr(torch.nn.functional, name)(tx, **kwargs)
    ty.backward(torch.ones_like(ty) * torch.arange(6.0, dtype=torch.float64))
    mx = mt.tensor(x, requires_grad=True)
    my = getattr(F, name)(mx, **kwargs)
    my.backward(mt.ones(4, 6, dtype=mt.float64) * mt.arange(6.0, dtype=mt.float64))
    np.testing.assert_allclose(my.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    # PyTorch's float64 backward of celu and hardsigmoid rounds 1 / alpha and 1 / 6 to float32 on the way
    rtol = 1e-6 if name in ("celu", "hardsigmoid") else 1e-12
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=1e-14)


# ---------------------------------------------------------- prelu, glu, threshold, the shrinks, Softmax2d
@pytest.mark.parametrize("shape, slopes", [((3, 4, 2), 4), ((3, 4), 1), ((5,), 1), ((2, 3, 2, 2), 3)])
def test_prelu_forward_and_gradients(shape, slopes):
    rng = np.random.default_rng(slopes)
    x, w = rng.normal(size=shape), rng.uniform(0.1, 0.5, slopes)
    x[np.abs(x) < 0.05] = 0.3
    w_b = w.reshape(-1, *(1,) * (len(shape) - 2)) if slopes > 1 else w
    np.testing.assert_allclose(F.prelu(mt.tensor(x), mt.tensor(w)).numpy(), np.where(x > 0, x, w_b * x), rtol=1e-15)
    gradcheck(F.prelu, (mt.tensor(x, requires_grad=True), mt.tensor(w, requires_grad=True)))
    layer = nn.PReLU(slopes, init=0.1)
    assert repr(layer) == f"PReLU(num_parameters={slopes})" and list(layer.state_dict()) == ["weight"]
    assert layer.weight.tolist() == pytest.approx([0.1] * slopes)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(mt.tensor(x), mt.ones(slopes + 1))


def test_glu_halves_and_errors():
    x = np.random.default_rng(0).normal(size=(3, 4, 2))
    for dim in (1, -1):
        a, b = np.split(x, 2, axis=dim)
        np.testing.assert_allclose(F.glu(mt.tensor(x), dim).numpy(), a / (1 + np.exp(-b)), rtol=1e-14)
    gradcheck(lambda t: F.glu(t, 1), (mt.tensor(x, requires_grad=True),))
    assert repr(nn.GLU()) == "GLU(dim=-1)" and nn.GLU(1)(mt.tensor(x)).shape == (3, 2, 2)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 0 is size 3"):
        F.glu(mt.tensor(x), 0)
    with pytest.raises(RuntimeError, match="does not support scalars"):
        F.glu(mt.tensor(1.0))


def test_threshold_inplace_shrinks_and_softmax2d():
    x = mt.tensor([-1.0, 0.1, 0.5, 2.0])
    assert F.threshold(x, 0.1, 20.0).tolist() == [20.0, 20.0, 0.5, 2.0]
    assert F.threshold_(x, 0.1, 20.0) is x and x.tolist() == [20.0, 20.0, 0.5, 2.0]
    assert repr(nn.Threshold(0.1, 20.0, True)) == "Threshold(threshold=0.1, value=20.0, inplace=True)"
    assert repr(nn.Hardshrink()) == "Hardshrink(0.5)" and repr(nn.Softshrink(0.3)) == "Softshrink(0.3)"
    assert nn.Softshrink(0.3)(mt.tensor([-1.0, 0.2, 1.0])).tolist() == pytest.approx([-0.7, 0.0, 0.7])
    assert nn.Hardshrink()(mt.tensor([-1.0, 0.5, 0.75])).tolist() == [-1.0, 0.0, 0.75]
    assert repr(nn.Tanhshrink()) == "Tanhshrink()" and repr(nn.Softmax2d()) == "Softmax2d()"
    with pytest.raises(RuntimeError, match="lambda must be in range"):
        F.softshrink(mt.zeros(2), -1.0)
    images = np.random.default_rng(0).normal(size=(2, 3, 2, 2))
    e = np.exp(images - images.max(1, keepdims=True))
    np.testing.assert_allclose(nn.Softmax2d()(mt.tensor(images)).numpy(), e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(nn.Softmax2d()(mt.tensor(images[0])).numpy(), (e / e.sum(1, keepdims=True))[0],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="expected input to be 3D or 4D, got 2D"):
        nn.Softmax2d()(mt.zeros(2, 3))


@pytest.mark.torch
def test_prelu_glu_and_shrinks_match_pytorch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).normal(0, 1, size=(4, 6, 2))
    for name, extra in (("prelu", (np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]),)), ("glu", ()), ("hardshrink", ()),
                        ("softshrink", ()), ("tanhshrink", ()), ("threshold", (0.2, -1.0))):
        arrays = [x] + [a for a in extra if isinstance(a, np.ndarray)]
        numbers = [a for a in extra if not isinstance(a, np.ndarray)]
        tt = [torch.tensor(a, requires_grad=True) for a in arrays]
        mm = [mt.tensor(a, requires_grad=True) for a in arrays]
        yt = getattr(torch.nn.functional, name)(*tt, *numbers)
        ym = getattr(F, name)(*mm, *numbers)
        yt.sum().backward()
        ym.sum().backward()
        np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-12, atol=1e-15, err_msg=name)
        for m, t in zip(mm, tt):
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-15, err_msg=name)
