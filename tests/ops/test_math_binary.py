"""Two-operand elementwise math (atan2, hypot, copysign, fmod, logaddexp, logaddexp2, lerp), trunc/frac and the
rounding methods, and their Tensor methods and in-place forms: NumPy float64 references over broadcast
shapes, gradients by gradcheck, PyTorch's dtypes and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, assert_close, away_from, broadcast_pairs, check_grad, randn, seeds, t64


def fmod_domain(a, b):
    """b away from 0 and a / b away from whole numbers, where fmod jumps."""
    b = np.where(np.abs(b) < 0.3, 0.6, b)
    q = a / b
    nudge = np.abs(q - np.round(q)) < 0.05
    return np.where(nudge, a + 0.2 * np.abs(b), a), b


# name -> (minitensor function, NumPy reference, (a, b) -> the (a, b) the op is smooth at)
BINARY = {
    "atan2": (mt.atan2, np.arctan2, lambda a, b: (a, away_from(b, (0.0,), 0.1))),
    "hypot": (mt.hypot, np.hypot, lambda a, b: (away_from(a, (0.0,), 0.1), b)),
    "copysign": (mt.copysign, np.copysign, lambda a, b: (away_from(a, (0.0,), 0.1), away_from(b, (0.0,), 0.1))),
    "fmod": (mt.fmod, np.fmod, fmod_domain),
    "logaddexp": (mt.logaddexp, np.logaddexp, lambda a, b: (a, b)),
    "logaddexp2": (mt.logaddexp2, np.logaddexp2, lambda a, b: (a, b)),
}


@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, name=st.sampled_from(sorted(BINARY)))
def test_binary_forward_and_grad(shapes, seed, name):
    (sa, sb), out_shape = shapes
    fn, ref, domain = BINARY[name]
    a, b = domain(randn(seed, sa), randn(seed + 1, sb))
    a, b = np.broadcast_to(a, np.broadcast_shapes(np.shape(a), sa)), np.broadcast_to(b, sb)
    out = fn(t64(a, False), t64(b, False))
    assert out.dtype is mt.float64 and out.shape == out_shape
    assert_close(out, ref(a, b), rtol=1e-12, atol=1e-14)
    assert_close(getattr(t64(a, False), name)(t64(b, False)), ref(a, b), rtol=1e-12, atol=1e-14)
    check_grad(fn, a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_a_python_scalar_and_float32(name):
    fn, ref, domain = BINARY[name]
    a, b = domain(randn(0, (3, 4)), np.full((3, 4), 1.7))
    x = mt.tensor(a, dtype=mt.float32)
    out = fn(x, 1.7)
    assert out.dtype is mt.float32
    assert_close(out, ref(a.astype(np.float32).astype(np.float64), b), rtol=2e-6, atol=1e-6)


def test_integer_operands_follow_pytorch():
    i = mt.tensor([1, -2, 3])
    assert mt.atan2(i, i).dtype is mt.float32 and mt.copysign(i, -1).tolist() == [-1.0, -2.0, -3.0]
    assert mt.fmod(mt.tensor([5, -5, 7]), 3).tolist() == [2, -2, 1] and mt.fmod(i, 2).dtype is mt.int64
    assert mt.fmod(mt.tensor([5.0, -5.0]), -3.0).tolist() == [2.0, -2.0]  # the dividend's sign
    assert mt.remainder(mt.tensor([5.0, -5.0]), -3.0).tolist() == [-1.0, -2.0]  # the divisor's
    with pytest.raises(ZeroDivisionError):
        mt.fmod(i, 0)
    for fn in (mt.hypot, mt.logaddexp, mt.logaddexp2):
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            fn(i, i)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):  # NotImplementedError is one
        mt.frac(i)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        mt.round(i, decimals=1)


def test_gradients_at_pytorch_corners():
    a = mt.tensor([0.0, -2.0, 3.0], requires_grad=True)
    mt.copysign(a, mt.tensor([-1.0, 1.0, -1.0])).sum().backward()
    assert a.grad.tolist() == [0.0, -1.0, -1.0]
    a, b = mt.tensor([0.0, 3.0], requires_grad=True), mt.tensor([0.0, 4.0], requires_grad=True)
    mt.atan2(a, b).sum().backward()
    assert_close(a.grad, [0.0, 0.16]) and assert_close(b.grad, [0.0, -0.12])
    a, b = mt.tensor([5.0, -5.0], requires_grad=True), mt.tensor([3.0, 3.0], requires_grad=True)
    mt.fmod(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [-1.0, 1.0]
    big = mt.tensor([1000.0, -1000.0], dtype=mt.float64)
    assert_close(mt.logaddexp(big, big), [1000 + np.log(2), -1000 + np.log(2)], rtol=1e-14)


@SETTINGS
@given(shapes=broadcast_pairs, seed=seeds, tensor_weight=st.booleans())
def test_lerp(shapes, seed, tensor_weight):
    (sa, sb), _ = shapes
    start, end = randn(seed, sa), randn(seed + 1, sb)
    weight = randn(seed + 2, sb) if tensor_weight else 0.3
    w = t64(weight, False) if tensor_weight else weight
    assert_close(mt.lerp(t64(start, False), t64(end, False), w), start + weight * (end - start), rtol=1e-12)
    if tensor_weight:
        check_grad(mt.lerp, start, end, weight)
    else:
        check_grad(lambda s, e: s.lerp(e, 0.3), start, end)


def test_lerp_dtype_rules():
    f = mt.ones(2)
    with pytest.raises(RuntimeError, match="expected dtype minitensor.float32 for `end`"):
        mt.lerp(f, f.double(), 0.5)
    with pytest.raises(RuntimeError, match="for `weight`"):
        mt.lerp(f, f, mt.tensor(0.5, dtype=mt.float64))
    with pytest.raises(NotImplementedError):
        mt.lerp(mt.tensor([1]), mt.tensor([2]), 0.5)


def test_trunc_fix_and_frac():
    a = np.array([-2.5, -1.5, -0.4, 0.0, 0.5, 1.5, 2.7])
    x = mt.tensor(a, requires_grad=True)
    assert_close(mt.trunc(x), np.trunc(a)) and assert_close(x.fix(), np.trunc(a))
    assert_close(x.frac(), a - np.trunc(a))
    mt.trunc(x).sum().backward()
    assert x.grad.tolist() == [0.0] * len(a)  # PyTorch's zero gradient
    assert mt.trunc(mt.tensor([3, -4])).tolist() == [3, -4] and mt.trunc(mt.tensor([3])).dtype is mt.int64


def test_methods_and_in_place_forms():
    a = np.array([0.3, -0.7, 1.6])
    for name, ref in (("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc), ("exp", np.exp),
                      ("sqrt", lambda v: np.sqrt(np.abs(v))), ("tan", np.tan), ("sinh", np.sinh), ("abs", np.abs),
                      ("sign", np.sign), ("log1p", lambda v: np.log1p(np.abs(v))),
                      ("relu", lambda v: np.maximum(v, 0))):
        src = np.abs(a) if name in ("sqrt", "log1p") else a
        x = mt.tensor(src, dtype=mt.float64)
        view = x[:]
        assert getattr(x, name + "_")() is x
        assert_close(x, ref(src), rtol=1e-12) and assert_close(view, ref(src), rtol=1e-12)
    x = mt.tensor([1.26, -2.5])
    assert x.round(decimals=1).tolist() == pytest.approx([1.3, -2.5]) and x.round_().tolist() == [1.0, -2.0]
    x = mt.tensor([5.0, -5.0])
    assert x.fmod_(3).tolist() == [2.0, -2.0] and x.remainder_(3).tolist() == [2.0, 1.0]
    assert mt.zeros(2).lerp_(mt.ones(2), 0.25).tolist() == [0.25, 0.25]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        mt.tensor([1, 2]).exp_()
    leaf = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.tan_()
    y = leaf * 0.5
    y.sin_()
    y.sum().backward()
    assert_close(leaf.grad, 0.5 * np.cos(np.full(2, 0.5)))
    m = mt.tensor(randn(0, (2, 3, 4)))
    assert_close(m[0].mm(m[1].T), m.numpy()[0] @ m.numpy()[1].T, rtol=1e-5)
    assert_close(m.bmm(m.transpose(1, 2)), m.numpy() @ m.numpy().transpose(0, 2, 1), rtol=1e-5)


@pytest.mark.torch
def test_binary_math_matches_pytorch():
    torch = pytest.importorskip("torch")
    a, b = randn(0, (3, 4)), randn(1, (4,))
    for name in sorted(BINARY) + ["lerp"]:
        args = (a, b, 0.3) if name == "lerp" else (a, b)
        if name == "lerp":
            b4 = np.broadcast_to(b, a.shape).copy()
            ours = mt.lerp(mt.tensor(a), mt.tensor(b4), 0.3)
            theirs = torch.lerp(torch.tensor(a), torch.tensor(b4), 0.3)
        else:
            ours = getattr(mt, name)(*(mt.tensor(v) for v in args))
            theirs = getattr(torch, name)(*(torch.tensor(v) for v in args))
        assert_close(ours, theirs.numpy(), rtol=1e-12, atol=1e-14)
    for name in ("atan2", "copysign", "fmod"):
        i = np.array([5, -7, 3])
        ours, theirs = getattr(mt, name)(mt.tensor(i), mt.tensor([2, 3, -2])), \
            getattr(torch, name)(torch.tensor(i), torch.tensor([2, 3, -2]))
        assert str(ours.dtype)[11:] == str(theirs.dtype)[6:] and ours.tolist() == pytest.approx(theirs.tolist())


@pytest.mark.torch
def test_unary_math_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.tanh(randn(2, (3, 4))) * 0.9
    for name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "exp2", "erf", "erfc", "erfinv",
                 "frac", "trunc", "arcsin", "arctanh"):
        ours, theirs = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        a, b = getattr(mt, name)(ours), getattr(torch, name)(theirs)
        assert_close(a, b.detach().numpy(), rtol=1e-12, atol=1e-14)
        a.sum().backward()
        b.sum().backward()
        assert_close(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-14)
        f32 = getattr(mt, name)(mt.tensor(x, dtype=mt.float32))
        assert_close(f32, getattr(torch, name)(torch.tensor(x, dtype=torch.float32)).numpy(), rtol=2e-6, atol=1e-6)
    i = mt.tensor([1, 2, 3])
    for name in ("tan", "erf", "exp2", "atan"):
        assert str(getattr(mt, name)(i).dtype)[11:] == str(getattr(torch, name)(torch.tensor([1, 2, 3])).dtype)[6:]
