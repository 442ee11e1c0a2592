"""bfloat16 (ml_dtypes) and float16: PyTorch's promotion (a hand-written table, and torch itself where
installed), casts, printing, the CPU's float32 GEMMs, and save/load in both formats."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

bf16, f16, f32, f64 = mt.bfloat16, mt.float16, mt.float32, mt.float64
ALL = [mt.bool, mt.uint8, mt.int8, mt.int16, mt.int32, mt.int64, f16, bf16, f32, f64]

# PyTorch's promote_types for the 16-bit floats (torch.promote_types, written out).
PROMOTIONS = {
    (bf16, f16): f32, (bf16, f32): f32, (bf16, f64): f64, (f16, f32): f32, (f16, f64): f64,
    (bf16, mt.int64): bf16, (bf16, mt.uint8): bf16, (bf16, mt.bool): bf16, (bf16, mt.int8): bf16,
    (f16, mt.int64): f16, (f16, mt.bool): f16, (bf16, bf16): bf16, (f16, f16): f16,
}


@pytest.mark.parametrize("pair", sorted(PROMOTIONS, key=str), ids=str)
def test_promote_types_table(pair):
    a, b = pair
    assert mt.promote_types(a, b) is PROMOTIONS[pair] and mt.promote_types(b, a) is PROMOTIONS[pair]


@pytest.mark.parametrize("make, other, expected", [
    (lambda: mt.ones(2, dtype=bf16), 2.5, bf16),  # a Python float stays weak (NumPy would give float32)
    (lambda: mt.ones(2, dtype=bf16), 3, bf16),
    (lambda: mt.ones(2, dtype=bf16), mt.ones(2, dtype=f16), f32),
    (lambda: mt.ones(2, dtype=bf16), mt.ones(2, dtype=mt.int64), bf16),
    (lambda: mt.ones(2, dtype=bf16), mt.tensor(1.0, dtype=f64), bf16),  # a 0-d tensor does not widen
    (lambda: mt.ones(2, dtype=mt.int32), mt.tensor(1.0, dtype=bf16), bf16),  # but lifts the category
    (lambda: mt.ones(2, dtype=bf16), mt.ones(2, dtype=f32), f32),
])
def test_binary_op_result_dtypes(make, other, expected):
    a = make()
    for out in (a + other, a * other, other * a, a - other, a / other):
        assert out.dtype is expected


@pytest.mark.torch
def test_promotion_matches_torch():
    torch = pytest.importorskip("torch")
    for a in ALL:
        for b in ALL:
            expected = str(torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))).split(".")[1]
            assert mt.promote_types(a, b).name == expected, (a, b)
    x = torch.ones(2, dtype=torch.bfloat16)
    assert str((x * 2.5).dtype) == "torch.bfloat16" and mt.result_type(mt.ones(2, dtype=bf16), 2.5) is bf16


def test_casts_printing_and_legacy_names():
    x = mt.tensor([1.5, 2.25, 3.0]).bfloat16()
    assert x.dtype is bf16 and x.is_floating_point() and x.element_size() == 2
    assert repr(x) == "tensor([1.5000, 2.2500, 3.0000], dtype=minitensor.bfloat16)"
    assert repr(mt.tensor(3.0, dtype=bf16)) == "tensor(3., dtype=minitensor.bfloat16)"
    assert x.to(mt.float32).tolist() == [1.5, 2.25, 3.0] and x.to(mt.bfloat16) is x
    assert x.type() == "torch.BFloat16Tensor" and isinstance(x, mt.BFloat16Tensor)
    assert mt.tensor([1 / 3], dtype=bf16).item() == 0.333984375  # rounded to 8 bits of mantissa
    m = mt.nn.Linear(2, 2).bfloat16()
    assert m.weight.dtype is bf16


@pytest.mark.parametrize("dtype", [bf16, f16])
def test_cpu_gemms_run_in_float32_and_return_the_16_bit_dtype(dtype):
    g = np.random.default_rng(0)
    a, b = g.standard_normal((5, 7)), g.standard_normal((7, 3))
    ta, tb = mt.tensor(a, dtype=dtype, requires_grad=True), mt.tensor(b, dtype=dtype)
    y = ta @ tb
    assert y.dtype is dtype
    exact = ta.float().detach().numpy().astype(np.float64) @ tb.float().numpy().astype(np.float64)
    np.testing.assert_allclose(y.float().detach().numpy(), exact, rtol=1e-2, atol=1e-2)
    y.sum().backward()
    assert ta.grad.dtype is dtype
    x, w = mt.randn(2, 3, 6, 6, dtype=dtype), mt.randn(4, 3, 3, 3, dtype=dtype)
    out = F.conv2d(x, w, padding=1)
    assert out.dtype is dtype
    ref = F.conv2d(x.float(), w.float(), padding=1)
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), rtol=2e-2, atol=5e-2)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the 16-bit loops on NaN
@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("dtype", [bf16, f16])
def test_cpu_relu_and_max_pool_on_16_bits(dtype, layout):
    """The CPU's 16-bit ReLU (on the bits) and max-pool (in float32, rounded once) against float32's results
    rounded, bit for bit, NaN (either sign), infinities and signed zeros included (NumPy's float16 maximum(-0.,
    0) is -0., float32's and PyTorch's max-pool +0.; PyTorch's ReLU keeps -0), and the values of the 16-bit loops
    (the generic bodies); ReLU's backward is PyTorch's threshold_backward (+0 where y <= 0, even for an infinite
    gradient; gy where y is NaN). The dtype and the memory layout are kept; gradients add up in float32: a few
    16-bit values, exactly."""
    from minitensor.backends import get_backend
    from minitensor.backends.generic.activation import ActivationOps
    from minitensor.backends.generic.pooling import PoolOps
    B, dt = get_backend("cpu"), dtype.np
    g = np.random.default_rng(0)
    x = g.standard_normal((2, 3, 8, 6))
    x[0, 0, :2, :3] = [[np.nan, -0.0, 0.0], [np.inf, -np.inf, -np.nan]]  # pooled with padding 1: -0 then 0
    x = x.astype(dt)
    gy = g.standard_normal(x.shape).astype(dt)
    gy[0, 0, 0, 1], gy[0, 0, 1, 1] = np.inf, -np.inf  # at y = -0 and y = +0 (from -inf)
    if layout == "channels_last":
        x, gy = (np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2) for a in (x, gy))
    x32, gy32 = x.astype(np.float32), gy.astype(np.float32)
    y = B.relu(x)
    for got, loops, wide in [(y, ActivationOps.relu(B, x), np.where(x32 < 0, np.float32(0), x32)),
                             (B.relu_backward(gy, y), None, np.where(x32 <= 0, np.float32(0), gy32))]:
        assert got.dtype == dt and got.strides == x.strides
        np.testing.assert_array_equal(got.view(np.uint16), wide.astype(dt).view(np.uint16))
        assert loops is None or np.array_equal(got, loops, equal_nan=True)
    for stride in ((2, 2), (1, 1)):  # windows apart, overlapping
        geometry = ((2, 2), stride, (1, 1), (1, 1))
        (y, offsets), (wide_y, wide_offsets) = B.max_pool2d(x, *geometry, False), B.max_pool2d(x32, *geometry,
                                                                                               False)
        assert y.dtype == dt and np.array_equal(y.view(np.uint16), wide_y.astype(dt).view(np.uint16))
        assert np.array_equal(offsets, wide_offsets)
        loops_y, loops_offsets = PoolOps.max_pool2d(B, x, *geometry, False)  # -0 and +0 tie: the first kept
        assert np.array_equal(y, loops_y, equal_nan=True) and np.array_equal(offsets, loops_offsets)
        gy = g.standard_normal(y.shape).astype(dt)
        gx = B.max_pool2d_backward(gy, offsets, x.shape, *geometry)
        exact = PoolOps.max_pool2d_backward(B, gy.astype(np.float64), offsets, x.shape, *geometry)
        assert gx.dtype == dt
        np.testing.assert_array_equal(gx, exact.astype(dt))  # float32 sums of a few 16-bit values: exact


@pytest.mark.parametrize("fmt", ["minitensor", "torch"])
def test_save_load_keeps_16_bit_floats(tmp_path, fmt):
    sd = {"b": mt.randn(3, 4).bfloat16(), "h": mt.randn(2).half(), "bt": mt.randn(4, 4).bfloat16().T}
    mt.save(sd, tmp_path / "x.pt", format=fmt)
    back = mt.load(tmp_path / "x.pt")
    for k, t in sd.items():
        assert back[k].dtype is t.dtype and back[k].shape == t.shape
        np.testing.assert_array_equal(back[k].float().numpy(), t.float().numpy())


def test_inplace_ops_between_the_16_bit_floats():
    x = mt.ones(3, dtype=f16)
    x.add_(mt.ones(3, dtype=bf16))
    assert x.dtype is f16 and x.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("op", [F.sigmoid, F.gelu, F.silu, F.elu, F.leaky_relu, F.softplus, mt.erf, mt.log2,
                                lambda t: t.clamp(-0.5, 0.5), lambda t: F.layer_norm(t, (4,)),
                                lambda t: F.batch_norm(t, mt.zeros(4, dtype=bf16), mt.ones(4, dtype=bf16),
                                                       training=True)],
                         ids=["sigmoid", "gelu", "silu", "elu", "leaky_relu", "softplus", "erf", "log2", "clamp",
                              "layer_norm", "batch_norm"])
def test_ops_on_bfloat16_stay_bfloat16_and_match_float32(op):
    """NumPy turns bfloat16 * a Python float into float32 and has no bfloat16 einsum; the ops keep bfloat16
    (as PyTorch) and agree with float32 on the same values to bfloat16's precision."""
    x = (mt.rand(3, 4) + 0.1).bfloat16().requires_grad_()
    y = op(x)
    assert y.dtype is bf16
    g = mt.randn(3, 4)  # not sum(): layer_norm's gradient of a sum is 0, all rounding
    (y.float() * g).sum().backward()
    assert x.grad.dtype is bf16
    x32 = x.detach().float().requires_grad_()
    ref = op(x32)
    (ref * g).sum().backward()
    np.testing.assert_allclose(y.detach().float().numpy(), ref.detach().numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(x.grad.float().numpy(), x32.grad.numpy(), rtol=5e-2, atol=5e-2)
