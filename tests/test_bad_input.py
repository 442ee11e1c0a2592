"""Issue #13, part C: creation, shape, pooling and conv arguments give PyTorch's answer or PyTorch's kind of
error (never a raw NumPy one). Valid outputs are checked against NumPy float64 references written here."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.testing import gradcheck

from helpers import FEW, SETTINGS, t64


# ------------------------------------------------------------------------------ creation
def linspace_ref(start: float, end: float, steps: int, integer: bool) -> np.ndarray:
    """PyTorch's points in float64: start + step*i for the first half, end - step*(steps-1-i) after;
    integer dtypes truncate the bounds and the points toward zero."""
    if integer:
        start, end = int(start), int(end)
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    points = np.where(i < max(steps // 2, 1), start + step * i, end - step * (steps - 1 - i))
    return np.trunc(points) if integer else points


def test_linspace_int_truncates_toward_zero():
    assert mt.linspace(5, -5, 20, dtype=mt.int32).tolist() == [
        5, 4, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, -1, -1, -2, -2, -3, -3, -4, -5]


@SETTINGS
@given(st.floats(-50, 50), st.floats(-50, 50), st.integers(0, 40),
       st.sampled_from([mt.int32, mt.int64, mt.float64, mt.float32]))
def test_linspace_matches_reference(start, end, steps, dtype):
    y = mt.linspace(start, end, steps, dtype=dtype)
    ref = linspace_ref(start, end, steps, not dtype.is_floating_point)
    assert y.dtype == dtype and y.shape == (steps,)
    if dtype.is_floating_point:
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6 if dtype == mt.float32 else 1e-15, atol=1e-5)
        np.testing.assert_allclose(y.numpy(), np.linspace(start, end, steps), rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(y.numpy(), ref)
    if steps and dtype == mt.float64:
        assert y[0].item() == start and (steps == 1 or y[-1].item() == end)


@SETTINGS
@given(st.integers(-20, 20), st.integers(-20, 20), st.integers(-5, 5).filter(bool))
def test_arange_matches_numpy_or_raises_as_pytorch(start, end, step):
    if (end - start) * step < 0:
        with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent with step sign"):
            mt.arange(start, end, step)
    else:
        np.testing.assert_array_equal(mt.arange(start, end, step).numpy(), np.arange(start, end, step))


@pytest.mark.parametrize("make, error, message", [
    (lambda: mt.linspace(0, 1, 5, dtype=mt.bool), RuntimeError, "not implemented for 'Bool'"),
    (lambda: mt.linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative"),
    (lambda: mt.arange(0, 10, -1), RuntimeError, "upper bound and larger bound inconsistent with step sign"),
    (lambda: mt.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    (lambda: mt.arange(0, float("inf")), RuntimeError, "unsupported range"),
    (lambda: mt.randperm(-1), RuntimeError, "n must be non-negative"),
    (lambda: mt.zeros(-1), RuntimeError, r"Trying to create tensor with negative dimension -1: \[-1\]"),
    (lambda: mt.ones(2, -3), RuntimeError, r"negative dimension -3: \[2, -3\]"),
    (lambda: mt.empty((-1, 2)), RuntimeError, "negative dimension -1"),
    (lambda: mt.full((2, -1), 1.0), RuntimeError, "negative dimension -1"),
    (lambda: mt.rand(-1), RuntimeError, "negative dimension -1"),
    (lambda: mt.randn(3, -2), RuntimeError, "negative dimension -2"),
    (lambda: mt.zeros(2).new_zeros(-1), RuntimeError, "negative dimension -1"),
    (lambda: mt.zeros(2.5), TypeError, "must be tuple of ints, not float"),
    (lambda: mt.eye(-1), RuntimeError, "n must be greater or equal to 0, got -1"),
    (lambda: mt.eye(2, -1), RuntimeError, "m must be greater or equal to 0, got -1"),
    (lambda: mt.randint(5, 3, (2,)), RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    (lambda: mt.randint(3, 3, (2,)), RuntimeError, "from=3 >= to=3"),
    (lambda: mt.randint(0, 3, (-1,)), RuntimeError, "negative dimension -1"),
    (lambda: mt.tensor([[1, 2], [3]]), ValueError, "different lengths"),
    (lambda: nn.Linear(-1, 3), RuntimeError, r"Trying to create tensor with negative dimension -1: \[3, -1\]"),
    (lambda: nn.Conv2d(3, 2, -1), RuntimeError,
     r"Trying to create tensor with negative dimension -1: \[2, 3, -1, -1\]"),
    (lambda: nn.ConvTranspose2d(3, -2, 3), RuntimeError, "negative dimension -2"),
])
def test_creation_errors(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_valid_creation_edges():
    assert mt.zeros(0, 3).shape == (0, 3) and mt.randperm(0).shape == (0,)
    assert mt.arange(3, 3).shape == (0,) and mt.linspace(2, 7, 1).tolist() == [2.0]
    assert mt.randint(3, (4,)).shape == (4,) and mt.eye(0).shape == (0, 0)
    assert mt.linspace(mt.tensor(2), mt.tensor(8), 4, dtype=mt.int64).tolist() == [2, 4, 6, 8]


# ------------------------------------------------------------------------------ shape
def pad_ref(x: np.ndarray, pads: tuple[int, ...], mode: str) -> np.ndarray:
    """PyTorch's F.pad with negative amounts, per dim (last dim first in ``pads``): constant and circular
    crop and then pad the cropped input; reflect and replicate pad the whole input and then crop."""
    np_mode = {"constant": "constant", "circular": "wrap", "reflect": "reflect", "replicate": "edge"}[mode]
    k = len(pads) // 2
    for i in range(k):
        axis, lo, hi = x.ndim - 1 - i, pads[2 * i], pads[2 * i + 1]
        n = x.shape[axis]
        crop = [slice(None)] * x.ndim
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        if mode in ("constant", "circular"):
            crop[axis] = slice(max(-lo, 0), n - max(-hi, 0))
            x = np.pad(x[tuple(crop)], widths, mode=np_mode)
        else:
            x = np.pad(x, widths, mode=np_mode)
            crop[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
            x = x[tuple(crop)]
    return x


@SETTINGS
@given(st.integers(2, 6), st.integers(2, 6), st.data(),
       st.sampled_from(["constant", "reflect", "replicate", "circular"]))
def test_pad_with_negative_amounts_matches_reference(h, w, data, mode):
    limit = {"reflect": lambda n: n - 1, "circular": lambda n: n}.get(mode, lambda n: 3)
    pads = []
    for n in (w, h):
        lo = data.draw(st.integers(-(n - 1), limit(n)))
        hi = data.draw(st.integers(-(n - 1 - max(-lo, 0)), limit(n)))
        if mode == "circular":  # PyTorch wraps around the cropped input: at most once around it
            hi = min(hi, n + min(lo, 0)) if hi > 0 else hi
            lo = min(lo, n + min(hi, 0)) if lo > 0 else lo
        pads += [lo, hi]
    x = np.random.default_rng(h * 7 + w).standard_normal((1, 2, h, w))
    y = F.pad(t64(x), tuple(pads), mode=mode)
    np.testing.assert_array_equal(y.detach().numpy(), pad_ref(x, tuple(pads), mode))


def test_reflect_and_replicate_crop_then_mirror_at_the_input_ends():
    x = mt.arange(5.0).reshape(1, 1, 5)
    assert F.pad(x, (-3, 2), mode="reflect").tolist() == [[[3.0, 4.0, 3.0, 2.0]]]
    assert F.pad(x, (-3, 2), mode="replicate").tolist() == [[[3.0, 4.0, 4.0, 4.0]]]
    assert F.pad(x, (-1, 2), mode="circular").tolist() == [[[1.0, 2.0, 3.0, 4.0, 1.0, 2.0]]]
    xt = t64(np.random.default_rng(0).standard_normal((1, 2, 5, 4)))
    assert gradcheck(lambda x: F.pad(x, (-1, 2, 3, -2), mode="reflect"), (xt,))


def test_pad_errors():
    with pytest.raises(RuntimeError, match="The input size 3, plus negative padding -2 and -2 resulted in a "
                                           "negative output size, which is invalid. Check dimension 1"):
        F.pad(mt.randn(2, 3), (-2, -2))
    with pytest.raises(RuntimeError, match="negative output size"):
        F.pad(mt.randn(1, 2, 5), (-6, 1), mode="reflect")
    with pytest.raises(TypeError, match="argument 'pad' must be a tuple of ints"):
        F.pad(mt.randn(2, 3), (1.5, 1))
    assert F.pad(mt.randn(2, 3), (-3, 0)).shape == (2, 0)


def test_flip():
    x = mt.arange(6).reshape(2, 3)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.flip((0, -2))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.flip(2)
    s = mt.tensor(3.0)
    assert s.flip(0).item() == 3.0 and s.flip(()).item() == 3.0 and s.flip(-1).shape == ()
    np.testing.assert_array_equal(x.flip((0, 1)).numpy(), np.arange(6).reshape(2, 3)[::-1, ::-1])
    np.testing.assert_array_equal(x.flip(np.int64(1)).numpy(), np.arange(6).reshape(2, 3)[:, ::-1])


@FEW
@given(st.integers(0, 9), st.integers(1, 8))
def test_chunk_follows_pytorch(n, chunks):
    """ceil(n / chunks) per piece (fewer pieces when that covers n sooner); an empty dim gives ``chunks``
    empty pieces."""
    x = np.arange(n * 2.0).reshape(n, 2)
    pieces = mt.tensor(x).chunk(chunks)
    size = -(-n // chunks)
    expected = [x[i:i + size] for i in range(0, n, size)] if n else [x] * chunks
    assert len(pieces) == len(expected)
    for p, e in zip(pieces, expected):
        np.testing.assert_array_equal(p.numpy(), e)


def test_shape_errors():
    x = mt.randn(2, 3)
    assert len(mt.zeros(0, 6).chunk(6)) == 6
    with pytest.raises(RuntimeError, match="chunk expects at least a 1-dimensional tensor"):
        mt.tensor(1.0).chunk(1)
    with pytest.raises(RuntimeError, match="split expects split_size be non-negative"):
        x.split(-1)
    with pytest.raises(RuntimeError, match="split_size can only be 0 if dimension size is 0"):
        x.split(0)
    with pytest.raises(RuntimeError, match="split_sizes have only non-negative entries"):
        x.split([3, -1])
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        x.repeat(-1, 1)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        mt.tensor(1.0).unbind()
    assert [t.shape for t in mt.zeros(0, 4).split(0)] == [(0, 4)]


# ------------------------------------------------------------------------------ pooling and conv
def test_pools_in_ceil_mode_past_the_padded_input():
    """F.max_pool2d(ones(1, 1, 3, 2), 3, ceil_mode=True): PyTorch pools one window hanging past the input."""
    x = np.arange(6.0).reshape(1, 1, 3, 2)
    assert F.max_pool2d(t64(x), 3, ceil_mode=True).tolist() == [[[[5.0]]]]
    assert F.avg_pool2d(t64(x), 3, ceil_mode=True).tolist() == [[[[x.sum() / 6]]]]
    with pytest.raises(RuntimeError, match=r"Given input size: \(1x3x2\). Calculated output size: \(1x1x0\)"):
        F.max_pool2d(t64(x), 3)


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", [mt.int32, mt.int64, mt.int8, mt.uint8])
def test_max_pool_integers(dtype, channels_last):
    x = np.random.default_rng(1).integers(0, 100, (2, 3, 5, 6))
    xt = mt.tensor(x, dtype=dtype)
    if channels_last:
        xt = xt.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    y, idx = F.max_pool2d(xt, 3, 2, 1, return_indices=True)
    y64, idx64 = F.max_pool2d(t64(x), 3, 2, 1, return_indices=True)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y.numpy(), y64.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), idx64.numpy())


def test_avg_pool_int64_truncates_as_pytorch():
    x = mt.tensor([[[[-3, 4], [5, -7]], [[1, 2], [3, 5]]]])
    assert F.avg_pool2d(x, 2).tolist() == [[[[0]], [[2]]]]  # -1/4 -> 0, 11/4 -> 2
    with pytest.raises(RuntimeError, match="expected a floating point input, got minitensor.int32"):
        F.avg_pool2d(x.int(), 2)


@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
@pytest.mark.parametrize("make", [
    lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, groups=2), lambda: nn.Conv2d(4, 2, 3, padding=1, groups=2),
    lambda: nn.MaxPool2d(2), lambda: nn.AvgPool2d(2), lambda: nn.AdaptiveAvgPool2d(3),
])
def test_empty_batches_forward_and_backward(make, layout):
    m = make()
    x = mt.zeros(0, 4, 5, 5)
    if layout == "channels_last":
        x = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    x.requires_grad_()
    y = m(x)
    assert y.shape[0] == 0
    y.sum().backward()
    assert x.grad.shape == x.shape
    for p in m.parameters():
        np.testing.assert_array_equal(p.grad.numpy(), np.zeros(p.shape))


@pytest.mark.parametrize("call, error, message", [
    (lambda x, w: F.conv2d(x, w, stride=0), RuntimeError, "stride must be at least 1"),
    (lambda x, w: F.conv2d(x, w, padding=-1), RuntimeError, "padding must be at least 0"),
    (lambda x, w: F.conv2d(x, w, dilation=(1, 2, 3)), RuntimeError, "dilation must be an int or a pair"),
    (lambda x, w: F.conv2d(x, w, stride="a"), TypeError, "stride must be an int or a pair"),
    (lambda x, w: F.conv2d(x, w, groups=0), RuntimeError, "groups must be a positive int"),
    (lambda x, w: F.conv_transpose2d(x, w, padding="same"), TypeError, "padding must be an int or a pair"),
    (lambda x, w: F.max_pool2d(x, 0), RuntimeError, "kernel_size must be at least 1"),
    (lambda x, w: F.avg_pool2d(x, 2, 0), RuntimeError, "stride must be at least 1"),
    (lambda x, w: F.adaptive_avg_pool2d(x, (1, 2, 3)), RuntimeError, "output_size must be an int or a pair"),
])
def test_conv_and_pool_argument_errors_are_pytorchs_types(call, error, message):
    with pytest.raises(error, match=message):
        call(mt.randn(1, 1, 5, 5), mt.randn(1, 1, 3, 3))


# ------------------------------------------------------------------------------ broadcasting and writes
def test_broadcast_errors_name_the_sizes():
    a, b = mt.ones(2, 3), mt.ones(2, 4)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) "
                                           "at non-singleton dimension 1"):
        mt.where(a > 0, a, b)
    with pytest.raises(RuntimeError, match="at non-singleton dimension 1"):
        a.masked_fill(b > 0, 1.0)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(3\) must match the existing "
                                           r"size \(4\) at non-singleton dimension 1. Target sizes: \[2, 3\]"):
        a[:] = b
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(3\) must match the existing size \(4\)"):
        a.copy_(mt.ones(4))
    c = mt.ones(2, 3, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match="expanded size of the tensor"):
        c[:] = b  # the graph-recording path
    with pytest.raises(RuntimeError, match="number of sizes provided"):
        mt.ones(3)[:] = mt.ones(2, 3)
    # valid broadcasts still work, and agree with NumPy
    cond = np.random.default_rng(0).random((3, 1)) > 0.5
    out = mt.where(mt.tensor(cond), mt.arange(4.0), mt.zeros(2, 1, 1))
    np.testing.assert_array_equal(out.numpy(), np.where(cond, np.arange(4.0), np.zeros((2, 1, 1))))


def test_writes_into_read_only_memory():
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single "
                                           r"memory location. Please clone\(\) the tensor"):
        mt.ones(3).expand(2, 3).add_(1)
    with pytest.raises(RuntimeError, match="single memory location"):
        mt.ones(3).expand(2, 3)[0] = 2.0
    frozen = np.ones(3)
    frozen.setflags(write=False)
    with pytest.raises(RuntimeError, match=r"read-only .* clone\(\)"):
        mt.from_numpy(frozen).fill_(2)
    assert mt.from_numpy(frozen).clone().add_(1).tolist() == [2.0, 2.0, 2.0]
