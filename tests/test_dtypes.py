"""dtypes and PyTorch's type promotion (the cases of torch's "Type promotion" docs, and NumPy's traps)."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

f16 = lambda: mt.ones(2, dtype=mt.float16)  # noqa: E731
f32 = lambda: mt.ones(2, dtype=mt.float32)  # noqa: E731
f64 = lambda: mt.ones(2, dtype=mt.float64)  # noqa: E731
i32 = lambda: mt.ones(2, dtype=mt.int32)  # noqa: E731
i64 = lambda: mt.ones(2, dtype=mt.int64)  # noqa: E731
u8 = lambda: mt.ones(2, dtype=mt.uint8)  # noqa: E731
i8 = lambda: mt.ones(2, dtype=mt.int8)  # noqa: E731
b = lambda: mt.tensor([True, True])  # noqa: E731


def zero_dim(dtype):
    return lambda: mt.tensor(1, dtype=dtype)


@pytest.mark.parametrize("make, other, expected", [
    # Python scalars are weak: they never widen a tensor of their category or above.
    (f32, 2.5, mt.float32), (f32, 2, mt.float32), (f16, 2.5, mt.float16), (f64, 2.5, mt.float64),
    (i32, 5, mt.int32), (u8, 5, mt.uint8), (i64, 2.5, mt.float32), (i32, 2.5, mt.float32),
    (b, 1, mt.int64), (b, 1.5, mt.float32), (b, True, mt.bool),
    # NumPy scalars act as Python scalars (NumPy 2 would upcast float32 * np.float64 to float64).
    (f32, np.float64(2.0), mt.float32), (f32, np.int64(2), mt.float32), (i32, np.int64(3), mt.int32),
    # dimensioned tensors promote within and across categories
    (f16, f32, mt.float32), (f32, f64, mt.float64), (i64, f32, mt.float32), (i32, i64, mt.int64),
    (u8, i8, mt.int16), (b, i32, mt.int32), (b, u8, mt.uint8), (i64, f16, mt.float16),
    # zero-dim tensors do not promote within a category, but do lift the category
    (f32, zero_dim(mt.float64), mt.float32), (i32, zero_dim(mt.int64), mt.int32),
    (u8, zero_dim(mt.int64), mt.uint8), (f16, zero_dim(mt.float64), mt.float16),
    (i32, zero_dim(mt.float64), mt.float64), (b, zero_dim(mt.int32), mt.int32),
    (zero_dim(mt.int32), zero_dim(mt.int64), mt.int64), (zero_dim(mt.int64), 2.5, mt.float32),
])
def test_add_mul_promotion(make, other, expected):
    a = make()
    o = other() if callable(other) else other
    results = [a + o, o + a, a * o, o * a]
    if expected is not mt.bool:
        results += [a - o, o - a]
    for result in results:
        assert result.dtype is expected


def test_bool_subtraction_is_refused():
    with pytest.raises((RuntimeError, TypeError)):
        b() - b()


@pytest.mark.parametrize("make, other, expected", [
    (i64, 2, mt.float32), (i32, i32, mt.float32), (b, 2, mt.float32), (i64, 2.5, mt.float32),
    (f16, 2, mt.float16), (f64, 2, mt.float64), (i32, f64, mt.float64),
])
def test_true_division_is_floating(make, other, expected):
    a = make()
    o = other() if callable(other) else other
    assert (a / o).dtype is expected and (o / a).dtype is expected


def test_integer_results_and_values():
    a = mt.tensor([7, -7])
    assert (a // 2).dtype is mt.int64 and (a // 2).tolist() == [3, -4]
    assert (a % 3).tolist() == [1, 2]
    assert (a / 2).tolist() == [3.5, -3.5]
    assert (a ** 2).dtype is mt.int64 and (a ** 2).tolist() == [49, 49]
    assert (mt.tensor([4]) ** 0.5).dtype is mt.float32 and (mt.tensor([4]) ** 0.5).tolist() == [2.0]
    assert (2 ** mt.tensor([3])).tolist() == [8]


def test_comparisons_give_bool_after_promotion():
    assert (i32() < 1.5).dtype is mt.bool and (i32() < 1.5).tolist() == [True, True]
    assert (f16() == f64()).dtype is mt.bool
    assert (mt.tensor([1, 2]) == mt.tensor([1.0, 2.5])).tolist() == [True, False]


def test_promotion_in_other_ops():
    assert mt.where(mt.tensor([True, False]), f32(), 2.5).dtype is mt.float32
    assert mt.where(mt.tensor([True, False]), i64(), 2.5).dtype is mt.float32
    assert mt.cat([i32(), f32()]).dtype is mt.float32
    assert mt.stack([f16(), f64()]).dtype is mt.float64
    assert mt.maximum(i32(), f64()).dtype is mt.float64
    assert (i64() @ i64()).dtype is mt.int64
    with pytest.raises(RuntimeError, match="same dtype"):  # products do not promote, as PyTorch's
        f32() @ f64()


@pytest.mark.parametrize("make", [i32, i64, b])
def test_float_functions_of_integers_give_the_default_float(make):
    x = make()
    for result in (x.exp(), x.log1p(), x.sqrt(), mt.sin(x), mt.rsqrt(x), x.logsumexp(0)):
        assert result.dtype is mt.float32
    assert x.sum().dtype is mt.int64
    with pytest.raises(RuntimeError, match="dtype"):
        x.mean()
    assert x.mean(dtype=mt.float64).dtype is mt.float64


def test_float_dtypes_are_preserved():
    for make in (f16, f32, f64):
        x = make()
        for result in (x * 2.5, x / 3, x ** 2, 1 - x, x.exp(), x.sum(), x.mean(), x.norm(), -x, x.abs(),
                       x.clamp(0, 0.5), x.logsumexp(0), x.var(), x.prod(), x @ x):
            assert result.dtype is x.dtype, (x.dtype, result)


def test_in_place_keeps_the_tensor_dtype():
    x = f32()
    x += f64()
    assert x.dtype is mt.float32
    y = i64()
    y *= 3
    assert y.dtype is mt.int64 and y.tolist() == [3, 3]
    with pytest.raises(RuntimeError, match="can't be cast"):
        y += 1.5
    with pytest.raises(RuntimeError, match="can't be cast"):
        y /= 2


def test_result_type_and_promote_types():
    assert mt.promote_types(mt.int32, mt.float16) is mt.float16
    assert mt.promote_types(mt.uint8, mt.int8) is mt.int16
    assert mt.promote_types(mt.bool, mt.bool) is mt.bool
    assert mt.result_type(mt.ones(1, dtype=mt.int32), 1.0) is mt.float32
    assert mt.result_type(mt.tensor(1, dtype=mt.int64), mt.ones(2, dtype=mt.int8)) is mt.int8
    assert mt.result_type(2, 3) is mt.int64 and mt.result_type(2, 3.0) is mt.float32


def test_default_dtype():
    assert mt.get_default_dtype() is mt.float32
    mt.set_default_dtype(mt.float64)  # the conftest fixture restores float32
    assert mt.tensor([1.5]).dtype is mt.float64 and mt.zeros(1).dtype is mt.float64
    assert (mt.tensor([1]) / 2).dtype is mt.float64 and mt.arange(0.0, 1.0, 0.5).dtype is mt.float64
    assert (mt.ones(1, dtype=mt.float32) * 2.5).dtype is mt.float32
    with pytest.raises(TypeError):
        mt.set_default_dtype(mt.int64)


def test_dtype_objects():
    assert mt.float is mt.float32 and mt.double is mt.float64 and mt.half is mt.float16
    assert mt.long is mt.int64 and mt.int is mt.int32
    assert repr(mt.float32) == "minitensor.float32"
    assert mt.float32.is_floating_point and not mt.int64.is_floating_point
    assert mt.float32.itemsize == 4 and mt.float64.np == np.float64


BACKWARD_OPS = {
    "sum": lambda t: t.sum(1), "mean": lambda t: t.mean(), "var": lambda t: t.var(0), "std": lambda t: t.std(1),
    "prod": lambda t: t.prod(1),
    "amax": lambda t: t.amax(0), "max_dim": lambda t: t.max(1).values, "logsumexp": lambda t: t.logsumexp(1),
    "norm": lambda t: t.norm(), "pow_scalar": lambda t: t ** 2.5, "scalar_pow": lambda t: 2.5 ** t,
    "pow": lambda t: t ** t, "rdiv": lambda t: 1 / t, "div": lambda t: t / t, "mod": lambda t: t % t,
    "clamp": lambda t: t.clamp(0.6, 1.2), "log2": mt.log2, "log10": mt.log10, "rsqrt": mt.rsqrt, "sqrt": mt.sqrt,
    "exp": mt.exp, "log1p": mt.log1p, "abs": mt.abs, "sin": mt.sin, "reciprocal": mt.reciprocal,
    "where": lambda t: mt.where(t > 1, t, 0.5), "gather": lambda t: t.gather(1, mt.tensor([[0, 0]] * 3)),
    "getitem": lambda t: t[[0, 1]], "matmul": lambda t: t @ t.T, "maximum": lambda t: mt.maximum(t, t * 0.9),
    "minimum_scalar": lambda t: mt.minimum(t, 1.0), "masked_fill": lambda t: t.masked_fill(t > 1, 0.25),
    "add_alpha": lambda t: mt.add(t, t, alpha=0.5), "sub_alpha": lambda t: mt.sub(t, t, alpha=0.5),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_OPS))
def test_backward_keeps_float32_without_the_engine_cast(name):
    """Each op's own backward returns float32 for float32 inputs (a float64 detour costs time and memory;
    the engine's final cast would hide it)."""
    from minitensor.backends import get_backend
    x = (mt.rand(3, 4) + 0.5).requires_grad_()
    y = BACKWARD_OPS[name](x)
    node = y.grad_fn
    grads = type(node).backward(node, get_backend("cpu"), np.ones(y.shape, np.float32))
    for g in grads if isinstance(grads, tuple) else (grads,):
        assert g is None or not hasattr(g, "dtype") or g.dtype == np.float32, (name, g.dtype)
