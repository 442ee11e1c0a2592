"""F.unfold / F.fold and nn.Unfold / nn.Fold: against float64 loops written from PyTorch's definition,
the adjoint identity between them, gradients by finite differences, col2im without a weight on every
backend, PyTorch's errors (and PyTorch itself when installed)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn
from minitensor.backends import get_backend
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=30, deadline=None)


def unfold_ref(x, kernel, dilation, padding, stride):
    """out[n, (c, i, j), (oh, ow)] = x_pad[n, c, oh*s + i*d, ow*s + j*d], by loops."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh, ow = ((size + 2 * p - d * (k - 1) - 1) // s + 1
              for size, p, d, k, s in zip((h, w), padding, dilation, kernel, stride))
    out = np.zeros((n, c * kernel[0] * kernel[1], oh * ow))
    for b, ci, i, j, r, q in np.ndindex(n, c, kernel[0], kernel[1], oh, ow):
        out[b, (ci * kernel[0] + i) * kernel[1] + j, r * ow + q] = \
            xp[b, ci, r * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]]
    return out


def fold_ref(cols, size, kernel, dilation, padding, stride):
    """Every column value added where unfold read it from, by loops; padding positions dropped."""
    n, ck, _ = cols.shape
    c = ck // (kernel[0] * kernel[1])
    oh, ow = ((s_ + 2 * p - d * (k - 1) - 1) // s + 1
              for s_, p, d, k, s in zip(size, padding, dilation, kernel, stride))
    out = np.zeros((n, c, size[0] + 2 * padding[0], size[1] + 2 * padding[1]))
    for b, ci, i, j, r, q in np.ndindex(n, c, kernel[0], kernel[1], oh, ow):
        out[b, ci, r * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]] += \
            cols[b, (ci * kernel[0] + i) * kernel[1] + j, r * ow + q]
    return out[:, :, padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]


@st.composite
def block_cases(draw):
    """(input shape, kernel, dilation, padding, stride) where at least one block fits."""
    pairs = lambda lo, hi: st.tuples(st.integers(lo, hi), st.integers(lo, hi))  # noqa: E731
    kernel, dilation, padding, stride = draw(pairs(1, 3)), draw(pairs(1, 2)), draw(pairs(0, 2)), draw(pairs(1, 3))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 7)), draw(st.integers(1, 7)))
    assume(all(shape[2 + a] + 2 * padding[a] >= dilation[a] * (kernel[a] - 1) + 1 for a in range(2)))
    return shape, kernel, dilation, padding, stride


@SETTINGS
@given(block_cases(), st.integers(0, 2**31 - 1))
def test_unfold_and_fold_match_loops_and_are_adjoint(case, seed):
    shape, kernel, dilation, padding, stride = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    cols = F.unfold(mt.tensor(x), kernel, dilation, padding, stride)
    want = unfold_ref(x, kernel, dilation, padding, stride)
    np.testing.assert_array_equal(cols.numpy(), want)
    assert cols.is_contiguous()
    c = rng.standard_normal(want.shape)
    folded = F.fold(mt.tensor(c), shape[2:], kernel, dilation, padding, stride)
    np.testing.assert_allclose(folded.numpy(), fold_ref(c, shape[2:], kernel, dilation, padding, stride),
                               rtol=1e-12, atol=1e-12)
    # <unfold(x), c> = <x, fold(c)>: each is the other's adjoint, hence its gradient
    np.testing.assert_allclose(np.sum(want * c), np.sum(x * folded.numpy()), rtol=1e-10)


def test_col2im_without_a_weight_on_every_backend():
    """The conv family's col2im hook with weight None (fold's path) against the loops, on cpu and cuda."""
    rng = np.random.default_rng(3)
    shape, kernel, dilation, padding, stride = (2, 3, 6, 5), (2, 3), (2, 1), (1, 0), (1, 2)
    cols = rng.standard_normal(unfold_ref(np.zeros(shape), kernel, dilation, padding, stride).shape)
    rows = np.ascontiguousarray(cols.transpose(0, 2, 1)).reshape(-1, cols.shape[1])
    want = fold_ref(cols, shape[2:], kernel, dilation, padding, stride)
    out_hw = (6, 2)  # (6 + 2 - 2 - 1) // 1 + 1, (5 - 2 - 1) // 2 + 1
    for B in [get_backend("cpu")] + ([get_backend("cuda")] if mt.cuda.is_available() else []):
        got = B.col2im(B.asarray(rows), out_hw, None, shape, stride, (1, 1, 0, 0), dilation, 1, kernel)
        np.testing.assert_allclose(B.to_numpy(got), want, rtol=1e-12, atol=1e-12)
        with pytest.raises(ValueError, match="kernel size must be given"):
            B.col2im(B.asarray(rows), out_hw, None, shape, stride, (1, 1, 0, 0), dilation, 1)


def test_gradients_by_finite_differences():
    rng = np.random.default_rng(1)
    x = mt.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.unfold(t, (2, 3), dilation=(1, 1), padding=1, stride=(2, 1)), [x])
    cols = mt.tensor(rng.standard_normal((2, 12, 9)), requires_grad=True)
    assert gradcheck(lambda t: F.fold(t, (4, 5), (2, 3), padding=(1, 0), stride=(2, 1)), [cols])


def test_unbatched_modules_dtypes_and_known_values():
    x = mt.arange(16.0).reshape(1, 4, 4)
    cols = nn.Unfold(kernel_size=2, stride=2)(x)  # the four 2x2 patches of a 4x4 image
    assert cols.shape == (4, 4) and cols.dtype == mt.float32
    assert cols[:, 0].tolist() == [0.0, 1.0, 4.0, 5.0] and cols[:, 3].tolist() == [10.0, 11.0, 14.0, 15.0]
    np.testing.assert_array_equal(nn.Fold((4, 4), 2, stride=2)(cols).numpy(), x.numpy())  # no overlap: inverse
    ones = F.fold(F.unfold(mt.ones(1, 1, 3, 3), 2), (3, 3), 2)  # overlapping blocks: each pixel's count
    assert ones[0, 0].tolist() == [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    assert F.unfold(mt.zeros(0, 2, 4, 4), 2).shape == (0, 8, 9)
    assert F.unfold(mt.ones(1, 1, 3, 3, dtype=mt.float64), 2).dtype == mt.float64
    assert repr(nn.Fold((4, 5), 2, stride=2)) == \
        "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=2)"
    assert repr(nn.Unfold(2, padding=1)) == "Unfold(kernel_size=2, dilation=1, padding=1, stride=1)"


@pytest.mark.parametrize("call, exc, match", [
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), 7), RuntimeError, "must be at least one"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), 0), RuntimeError, "kernel size should be greater than zero"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), 2, stride=0), RuntimeError, "stride should be greater than zero"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), 2, dilation=0), RuntimeError, "dilation should be greater than zero"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), 2, padding=-1), RuntimeError, "padding should be non-negative"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), (2, 3, 4)), RuntimeError, "kernel_size"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6), 2.0), TypeError, "kernel_size"),
    (lambda: F.unfold(mt.ones(2, 0, 5, 6), 2), RuntimeError, "Expected 3D or 4D"),
    (lambda: F.unfold(mt.ones(5, 6), 2), RuntimeError, "Expected 3D or 4D"),
    (lambda: F.unfold(mt.ones(2, 3, 5, 6, dtype=mt.int64), 2), NotImplementedError, "not implemented for"),
    (lambda: F.fold(mt.ones(2, 12, 20), (5, 6), 3), RuntimeError, "divisible by the product of kernel_size"),
    (lambda: F.fold(mt.ones(2, 12, 20), (5, 7), 2), RuntimeError, r"sliding blocks 4 \* 6 = 24"),
    (lambda: F.fold(mt.ones(2, 12, 20), (1, 1), 2), RuntimeError, r"sliding blocks 0 \* 0 = 0"),
    (lambda: F.fold(mt.ones(2, 3, 4, 20), (5, 6), 2), RuntimeError, "Expected 2D or 3D"),
    (lambda: F.fold(mt.ones(2, 12, 20), (5, 6), 2, stride=0), RuntimeError, "stride should be greater"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.torch
@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", [
    ((2, 3, 8, 7), (3, 2), (1, 2), (1, 0), (2, 1)), ((3, 9, 9), 3, 1, 1, 3), ((1, 2, 6, 6), 2, 2, 2, 1)])
def test_against_torch(shape, kernel, dilation, padding, stride):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape)
    t_x, m_x = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    t_cols = torch.nn.functional.unfold(t_x, kernel, dilation, padding, stride)
    m_cols = F.unfold(m_x, kernel, dilation, padding, stride)
    np.testing.assert_array_equal(m_cols.detach().numpy(), t_cols.detach().numpy())
    t_y = torch.nn.functional.fold(t_cols.square(), shape[-2:], kernel, dilation, padding, stride)
    m_y = F.fold(m_cols.square(), shape[-2:], kernel, dilation, padding, stride)
    np.testing.assert_allclose(m_y.detach().numpy(), t_y.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(tuple(t_y.shape))
    (t_y * torch.tensor(g)).sum().backward()
    (m_y * mt.tensor(g)).sum().backward()
    np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-12, atol=1e-12)
