"""The special family (lgamma, digamma, polygamma, i0, sinc) and the math family's later additions (float_power,
heaviside, nan_to_num) with the tensor queries (is_floating_point, is_complex, detach): float64 references
(the standard library's lgamma, power series, known constants), gradients by gradcheck (lgamma's gradcheck
checks digamma's values, digamma's polygamma(1)'s, i0's i1's), PyTorch's corner values, dtypes and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

from helpers import SETTINGS, assert_close, broadcast_pairs, check_grad, randn, seeds, shapes, t64

NAN, INF = math.nan, math.inf


def no_poles(x: np.ndarray) -> np.ndarray:
    """x moved 0.3 past the poles of the gamma function (0, -1, -2...) where it is within 0.15 of one."""
    return np.where((x < 0.5) & (np.abs(x - np.round(x)) < 0.15), np.round(x) + 0.3, x)


@SETTINGS
@given(shape=shapes, seed=seeds)
def test_lgamma_digamma_polygamma_i0_values_and_gradients(shape, seed):
    x = no_poles(4 * randn(seed, shape))
    assert_close(mt.lgamma(t64(x, False)), np.vectorize(math.lgamma)(x), rtol=1e-12, atol=1e-13)
    check_grad(mt.lgamma, x)  # analytic: digamma
    check_grad(mt.digamma, x)  # polygamma(1)
    check_grad(lambda t: mt.polygamma(2, t), x, rtol=1e-3, atol=1e-4)  # polygamma(3)
    check_grad(lambda t: t.polygamma(1), x)
    check_grad(mt.i0, x / 4)  # i1; at |x| ~ 15 i0 ~ 3e5, whose finite differences lose the digits checked
    check_grad(mt.sinc, x)


def test_known_values():
    gamma = 0.5772156649015329
    one_half = t64([1.0, 0.5], False)
    assert_close(mt.digamma(one_half), [-gamma, -gamma - 2 * math.log(2)], rtol=1e-13)
    assert_close(mt.polygamma(0, one_half), [-gamma, -gamma - 2 * math.log(2)], rtol=1e-13)
    assert_close(mt.polygamma(1, one_half), [math.pi ** 2 / 6, math.pi ** 2 / 2], rtol=1e-13)
    assert_close(mt.polygamma(3, one_half), [math.pi ** 4 / 15, math.pi ** 4], rtol=1e-12)
    assert_close(mt.i0(t64([0.0, 1.0, -2.0], False)), [1.0, 1.2660658777520082, 2.2795853023360673], rtol=1e-13)
    assert_close(mt.sinc(t64([0.0, 0.5, 1.0, -1.5], False)), [1.0, 2 / math.pi, 0.0, -2 / (3 * math.pi)], atol=1e-15)


def test_special_corners_match_pytorch():
    x = mt.tensor([-2.5, -1.0, 0.0, 0.5, 1.0, 2.0, 10.0, INF, -INF, NAN, 1e-30])
    r = dict(rtol=1e-5, atol=0)
    same = np.testing.assert_allclose
    same(mt.lgamma(x).numpy(), [-0.0562437, INF, INF, 0.5723649, 0, 0, 12.801827, INF, INF, NAN, 69.07755], **r)
    same(mt.digamma(x).numpy(), [1.1031566, NAN, -INF, -1.9635100, -0.5772157, 0.4227843, 2.2517526, INF, NAN,
                                 NAN, -1e30], **r)
    same(mt.i0(x).numpy(), [3.2898391, 1.2660659, 1, 1.0634834, 1.2660659, 2.2795853, 2815.7166, NAN, NAN, NAN, 1],
         **r)
    assert mt.digamma(mt.tensor([-0.0])).item() == INF and mt.lgamma(mt.tensor([-0.0])).item() == INF
    g = mt.tensor([0.0, 1e-20, 1.0, INF, NAN], requires_grad=True)
    y = mt.sinc(g)
    y.sum().backward()
    same(y.detach().numpy(), [1.0, 1.0, 0.0, NAN, NAN], atol=1e-7)
    same(g.grad.numpy(), [0.0, 0.0, -1.0, NAN, NAN], atol=1e-7)  # 0 at 0: PyTorch's sinc_backward


def test_special_dtypes_methods_and_errors():
    i = mt.tensor([1, 2, 3])
    for name in ("lgamma", "digamma", "i0", "sinc"):
        assert getattr(mt, name)(i).dtype is mt.float32 and getattr(i, name)().dtype is mt.float32
        for dt in (mt.float16, mt.bfloat16, mt.float64):
            assert getattr(mt, name)(mt.ones(2, dtype=dt)).dtype is dt
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(i.clone(), name + "_")()
    assert_close(mt.lgamma(mt.tensor([1.0, 2.0, 4.0]).half()), [0.0, 0.0, math.log(6)], rtol=1e-3)
    assert_close(mt.polygamma(1, i), [1.644934, 0.644934, 0.394934], rtol=1e-5)
    x = mt.tensor([2.0, 3.0])
    assert x.polygamma_(1) is x and x.tolist() == pytest.approx([0.644934, 0.394934], rel=1e-5)
    assert mt.tensor([4.0]).lgamma_().tolist() == pytest.approx([math.log(6)])
    with pytest.raises(RuntimeError, match="does not support negative n"):
        mt.polygamma(-1, x)
    with pytest.raises(TypeError, match="argument 'n' \\(position 1\\) must be int, not float"):
        mt.polygamma(1.5, x)
    with pytest.raises(TypeError, match="argument 'input' \\(position 2\\) must be Tensor, not float"):
        mt.polygamma(1, 2.0)


# ------------------------------------------------------------------------------------------------ float_power
@SETTINGS
@given(pair=broadcast_pairs, seed=seeds, dtype=st.sampled_from([mt.float32, mt.float64, mt.int64]))
def test_float_power_computes_in_float64(pair, seed, dtype):
    (sa, sb), out_shape = pair
    a, b = np.abs(randn(seed, sa)) + 0.5, randn(seed + 1, sb)
    if dtype is mt.int64:
        a, b = np.round(3 * a), np.round(2 * np.abs(b))
    out = mt.float_power(mt.tensor(a, dtype=dtype), mt.tensor(b, dtype=dtype))
    assert out.dtype is mt.float64 and out.shape == out_shape
    cast = np.asarray(a, dtype.np).astype(np.float64), np.asarray(b, dtype.np).astype(np.float64)
    assert_close(out, cast[0] ** cast[1], rtol=1e-13)
    check_grad(mt.float_power, a, b)


def test_float_power_scalars_gradient_dtype_and_in_place():
    assert mt.float_power(2, mt.tensor([1.0, 2.0, 3.0])).tolist() == [2.0, 4.0, 8.0]
    assert mt.float_power(mt.tensor([1, 2, 3]), 2).dtype is mt.float64
    assert math.isnan(mt.float_power(mt.tensor([-8.0]), 1 / 3).item())
    x = mt.tensor([0.0, 2.0], requires_grad=True)
    y = mt.float_power(x, mt.tensor([2.0, 0.5], requires_grad=True))
    y.sum().backward()
    assert x.grad.dtype is mt.float32 and x.grad.tolist() == pytest.approx([0.0, 0.5 / math.sqrt(2)])
    d = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64)
    assert d.float_power_(2) is d and d.tolist() == [1.0, 4.0, 9.0]
    with pytest.raises(RuntimeError, match="has dtype Float but the operation's result requires dtype Double"):
        mt.ones(2).float_power_(2)
    with pytest.raises(TypeError, match="expects a Tensor"):
        mt.float_power(2, 3)


# -------------------------------------------------------------------------------------------------- heaviside
def test_heaviside_as_pytorch():
    x = mt.tensor([-1.0, 0.0, 2.0, NAN, -0.0])
    assert mt.heaviside(x, mt.tensor([0.5])).tolist() == [0.0, 0.5, 1.0, 0.0, 0.5]  # nan gives 0, as PyTorch
    assert x.heaviside(mt.tensor([0.5])).tolist() == [0.0, 0.5, 1.0, 0.0, 0.5]
    assert mt.heaviside(mt.tensor([[-1], [0], [3]]), mt.tensor([7, 8])).tolist() == [[0, 0], [7, 8], [1, 1]]
    assert mt.heaviside(mt.tensor([True, False]), mt.tensor([True])).tolist() == [True, True]
    assert mt.heaviside(x.half(), mt.tensor([0.5]).half()).dtype is mt.float16
    y = mt.tensor([0.0, 3.0])
    assert y.heaviside_(mt.tensor([0.25])) is y and y.tolist() == [0.25, 1.0]
    with pytest.raises(RuntimeError, match="different dtypes"):
        mt.heaviside(x, mt.tensor([0.5], dtype=mt.float64))
    with pytest.raises(TypeError, match="argument 'values' \\(position 2\\) must be Tensor, not float"):
        mt.heaviside(x, 0.5)
    g = mt.tensor([1.0, 0.0], requires_grad=True)
    out = mt.heaviside(g, mt.tensor([0.5]))
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        out.sum().backward()


# ------------------------------------------------------------------------------------------------- nan_to_num
def test_nan_to_num_defaults_per_dtype_and_gradient():
    a = mt.tensor([NAN, INF, -INF, 1.0], requires_grad=True)
    y = mt.nan_to_num(a)
    big = float(np.finfo(np.float32).max)
    assert y.tolist() == [0.0, big, -big, 1.0]
    y.sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0, 1.0]  # passes where the input is finite, as PyTorch
    raw = a.detach()
    assert mt.nan_to_num(raw.half()).tolist() == [0.0, 65504.0, -65504.0, 1.0]
    assert mt.nan_to_num(raw.bfloat16()).tolist() == [0.0, 3.3895313892515355e38, -3.3895313892515355e38, 1.0]
    assert mt.nan_to_num(raw.double(), nan=1.0, posinf=2.0).tolist() == [1.0, 2.0, -np.finfo(np.float64).max, 1.0]
    assert mt.nan_to_num(raw, 5.0, neginf=-7).tolist() == [5.0, big, -7.0, 1.0]
    assert mt.nan_to_num(raw.half(), posinf=1e10).tolist() == [0.0, INF, -65504.0, 1.0]  # past float16's range
    i = mt.tensor([1, 2, 3])
    copy = mt.nan_to_num(i, nan=1.5)
    assert copy.tolist() == [1, 2, 3] and copy.dtype is mt.int64 and copy.array is not i.array
    x = mt.tensor([NAN, 2.0])
    assert x.nan_to_num_(nan=-1.0) is x and x.tolist() == [-1.0, 2.0]
    assert mt.tensor([INF]).nan_to_num(posinf=3.0).tolist() == [3.0]


@SETTINGS
@given(shape=shapes, seed=seeds)
def test_nan_to_num_is_the_identity_on_finite_values(shape, seed):
    x = randn(seed, shape)
    assert_close(mt.nan_to_num(t64(x, False)), x, rtol=0, atol=0)
    check_grad(mt.nan_to_num, x)


# ----------------------------------------------------------------------------------------------------- queries
def test_is_floating_point_is_complex_detach():
    assert [mt.is_floating_point(mt.ones(1, dtype=d)) for d in (mt.float16, mt.bfloat16, mt.float32, mt.float64)] \
        == [True] * 4
    assert not mt.is_floating_point(mt.tensor([1])) and not mt.is_floating_point(mt.tensor([True]))
    assert mt.is_complex(mt.ones(1)) is False and mt.ones(1).is_complex() is False
    with pytest.raises(TypeError, match="is_floating_point\\(\\): argument 'input' \\(position 1\\) must be Tensor"):
        mt.is_floating_point(1.0)
    with pytest.raises(TypeError, match="is_complex\\(\\): argument 'input'"):
        mt.is_complex(3)
    x = mt.ones(2, requires_grad=True)
    d = mt.detach(x * 2)
    assert not d.requires_grad and d.grad_fn is None and d.tolist() == [2.0, 2.0]
    d.add_(1)  # the same memory, and the version counter with it
    with pytest.raises(TypeError, match="must be Tensor"):
        mt.detach([1.0])


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma", "i0", "sinc", "nan_to_num", "logit", "xlogy",
                                  "addcmul", "addcdiv", "clamp_min", "clamp_max", "heaviside", "float_power"])
def test_every_added_op_is_a_function_a_method_and_an_in_place_method(name):
    assert callable(getattr(mt, name)) and name in mt.__all__
    assert callable(getattr(mt.Tensor, name)) and callable(getattr(mt.Tensor, name + "_"))


@pytest.mark.parametrize("name", ["nansum", "nanmean", "diff", "detach", "is_floating_point", "is_complex"])
def test_the_added_queries_and_reductions_are_functions_and_methods(name):
    assert callable(getattr(mt, name)) and name in mt.__all__ and callable(getattr(mt.Tensor, name))
