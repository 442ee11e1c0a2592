"""fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d: values and flat indices against loops over
PyTorch's interval formula (start_i = int((i + u) * alpha) - int(u * alpha) in the samples' dtype, the last
window at size - k; ties: the first max in scan order; NaN: the last NaN), gradients sent to the indices,
samples drawn from minitensor's generator, output_ratio, unbatched inputs, PyTorch's errors, and parity with
PyTorch given the same _random_samples."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn
from minitensor.backends import get_backend
from minitensor.testing import gradcheck

SETTINGS = settings(max_examples=25, deadline=None)
POOL = {2: F.fractional_max_pool2d, 3: F.fractional_max_pool3d}


def intervals(u, size, out, k):
    """PyTorch's window starts along one axis, one scalar operation at a time in u's dtype."""
    dt = type(u)
    seq = [size - k] * out
    if out > 1:
        alpha = dt(size - k) / dt(out - 1)
        for i in range(out - 1):
            seq[i] = int((dt(i) + u) * alpha) - int(u * alpha)
    return seq


def fractional_ref(x, kernel, out, samples):
    """(y, indices) by loops; samples[n, c] holds (u_w, u_h) in 2-D, (u_d, u_h, u_w) in 3-D."""
    dims = len(kernel)
    spatial = x.shape[2:]
    y = np.zeros(x.shape[:2] + tuple(out), x.dtype)
    idx = np.zeros(x.shape[:2] + tuple(out), np.int64)
    for b, ch in np.ndindex(*x.shape[:2]):
        u = samples[b, ch][::-1] if dims == 2 else samples[b, ch]  # per axis, in spatial order
        starts = [intervals(u[a], spatial[a], out[a], kernel[a]) for a in range(dims)]
        for o in np.ndindex(*out):
            first = tuple(starts[a][o[a]] for a in range(dims))
            best, where = -np.inf, np.ravel_multi_index(first, spatial)
            for k in itertools.product(*(range(kk) for kk in kernel)):
                pos = tuple(first[a] + k[a] for a in range(dims))
                v = x[(b, ch) + pos]
                if v > best or np.isnan(v):
                    best, where = v, np.ravel_multi_index(pos, spatial)
            y[(b, ch) + o], idx[(b, ch) + o] = best, where
    return y, idx


@st.composite
def cases(draw):
    dims = draw(st.sampled_from([2, 3]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    # PyTorch: out + k - 1 <= size in 2-D, < size in 3-D
    spatial = tuple(draw(st.integers(k + (dims == 3), 9 if dims == 2 else 6)) for k in kernel)
    out = tuple(draw(st.integers(1, s - k + 1 - (dims == 3))) for s, k in zip(spatial, kernel))
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + spatial, kernel, out, draw(st.booleans())


def values(rng, shape, with_nan, dtype=np.float64):
    x = rng.integers(-2, 3, shape).astype(dtype)  # small integers: many ties
    if with_nan:
        x[rng.random(shape) < 0.1] = np.nan
    return x


@SETTINGS
@given(cases(), st.sampled_from([np.float64, np.float32]), st.integers(0, 2**31 - 1))
def test_values_and_indices_match_loops(case, dtype, seed):
    shape, kernel, out, with_nan = case
    rng = np.random.default_rng(seed)
    x = values(rng, shape, with_nan, dtype)
    samples = rng.random(shape[:2] + (len(kernel),)).astype(dtype)
    want_y, want_i = fractional_ref(x, kernel, out, samples)
    name = f"fractional_max_pool{len(kernel)}d"
    for B in [get_backend("cpu")] + ([get_backend("cuda")] if mt.cuda.is_available() else []):
        y, idx = getattr(B, name)(B.asarray(x), kernel, out, B.asarray(samples))
        np.testing.assert_array_equal(B.to_numpy(y), want_y)
        np.testing.assert_array_equal(B.to_numpy(idx), want_i)
        assert B.to_numpy(y).dtype == dtype and B.to_numpy(idx).dtype == np.int64
    y, idx = POOL[len(kernel)](mt.tensor(x), kernel, out, return_indices=True, _random_samples=mt.tensor(samples))
    np.testing.assert_array_equal(y.numpy(), want_y)
    np.testing.assert_array_equal(idx.numpy(), want_i)


@SETTINGS
@given(cases(), st.integers(0, 2**31 - 1))
def test_gradient_goes_to_the_indices_ties_included(case, seed):
    shape, kernel, out, _ = case
    rng = np.random.default_rng(seed)
    x = mt.tensor(values(rng, shape, False), requires_grad=True)
    samples = rng.random(shape[:2] + (len(kernel),))
    y = POOL[len(kernel)](x, kernel, out, _random_samples=mt.tensor(samples))
    gy = rng.standard_normal(tuple(y.shape))
    (y * mt.tensor(gy)).sum().backward()
    _, want_i = fractional_ref(x.detach().numpy(), kernel, out, samples)
    want = np.zeros(shape)
    for pos in np.ndindex(gy.shape):  # overlapping windows may share a max: their gradients add
        want[pos[0], pos[1]].flat[want_i[pos]] += gy[pos]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-12)


def test_gradcheck_unbatched_ratio_and_modules():
    rng = np.random.default_rng(0)
    x2 = mt.tensor(rng.standard_normal((2, 3, 8, 9)), requires_grad=True)  # distinct values: no ties
    s2 = mt.tensor(rng.random((2, 3, 2)))
    assert gradcheck(lambda t: F.fractional_max_pool2d(t, 3, (4, 5), _random_samples=s2), [x2])
    x3 = mt.tensor(rng.standard_normal((1, 2, 6, 5, 7)), requires_grad=True)
    s3 = mt.tensor(rng.random((1, 2, 3)))
    assert gradcheck(lambda t: F.fractional_max_pool3d(t, 2, (3, 2, 4), _random_samples=s3), [x3])
    # unbatched: the first row of the samples
    y, idx = F.fractional_max_pool2d(x2[1], (2, 3), output_ratio=0.5, return_indices=True, _random_samples=s2[1:])
    assert y.shape == (3, 4, 4)  # int(8 * 0.5), int(9 * 0.5)
    want_y, want_i = fractional_ref(x2.detach().numpy()[1:], (2, 3), (4, 4), s2.numpy()[1:])
    np.testing.assert_array_equal(y.detach().numpy(), want_y[0])
    np.testing.assert_array_equal(idx.numpy(), want_i[0])
    pool = nn.FractionalMaxPool3d((2, 2, 3), output_ratio=(0.5, 0.6, 0.5), return_indices=True,
                                  _random_samples=s3)
    assert "_random_samples" in dict(pool.named_buffers())
    y3, i3 = pool(x3[0])
    assert y3.shape == i3.shape == (2, 3, 3, 3)
    want_y, want_i = fractional_ref(x3.detach().numpy(), (2, 2, 3), (3, 3, 3), s3.numpy())
    np.testing.assert_array_equal(y3.detach().numpy(), want_y[0])
    np.testing.assert_array_equal(i3.numpy(), want_i[0])
    assert nn.FractionalMaxPool2d(2, output_size=3)(x2).shape == (2, 3, 3, 3)
    assert F.fractional_max_pool2d(x2[:0], 2, 3, _random_samples=s2).shape == (0, 3, 3, 3)


def test_samples_come_from_minitensors_generator():
    x = mt.tensor(np.random.default_rng(2).standard_normal((2, 3, 9, 9)))
    mt.manual_seed(7)
    samples = mt.rand(2, 3, 2, dtype=mt.float64)
    mt.manual_seed(7)
    y, idx = F.fractional_max_pool2d(x, 2, 4, return_indices=True)
    want_y, want_i = fractional_ref(x.numpy(), (2, 2), (4, 4), samples.numpy())
    np.testing.assert_array_equal(y.numpy(), want_y)
    np.testing.assert_array_equal(idx.numpy(), want_i)
    mt.manual_seed(8)
    draws = {tuple(F.fractional_max_pool2d(x, 2, 4, return_indices=True)[1].numpy().ravel()) for _ in range(5)}
    assert len(draws) > 1  # fresh samples per call
    volume = mt.tensor(np.random.default_rng(5).standard_normal((2, 6, 6, 6)))  # (C, D, H, W), unbatched
    mt.manual_seed(3)
    a = F.fractional_max_pool3d(volume, 2, 3)
    mt.manual_seed(3)
    np.testing.assert_array_equal(F.fractional_max_pool3d(volume, 2, 3).numpy(), a.numpy())


def test_max_unpool_inverts_the_indices():
    x = mt.tensor(np.random.default_rng(3).standard_normal((1, 2, 7, 7)))
    y, idx = F.fractional_max_pool2d(x, 2, 4, return_indices=True, _random_samples=mt.full((1, 2, 2), 0.5,
                                                                                            dtype=mt.float64))
    back = F.max_unpool2d(y, idx, 2, output_size=(7, 7)).numpy().reshape(1, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(back, idx.numpy().reshape(1, 2, -1), 2),
                                  y.numpy().reshape(1, 2, -1))


@pytest.mark.parametrize("call, error, match", [
    (lambda x, s: F.fractional_max_pool2d(x, 2), ValueError, "requires specifying either an output_size or an"),
    (lambda x, s: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)), ValueError, "single Int or tuple"),
    (lambda x, s: F.fractional_max_pool2d(x, 3, (6, 6), _random_samples=s), RuntimeError,
     r"fractional_max_pool2d\(\): pool height 3 too large relative to input height 7"),
    (lambda x, s: F.fractional_max_pool2d(x, 3, (5, 7), _random_samples=s), RuntimeError, "pool width 3 too large"),
    (lambda x, s: F.fractional_max_pool2d(x, 2, 3, _random_samples=s.float()), RuntimeError, "same dtype as input"),
    (lambda x, s: F.fractional_max_pool2d(x, 2, 3, _random_samples=s[:1]), RuntimeError, "no less then input batch"),
    (lambda x, s: F.fractional_max_pool2d(x, 2, 3, _random_samples=s[:, :2]), RuntimeError, "equals to input chan"),
    (lambda x, s: F.fractional_max_pool2d(x, 2, 3, _random_samples=s[..., :1]), RuntimeError,
     r"size\(2\) equals to 2; got 1"),
    (lambda x, s: F.fractional_max_pool2d(x, 2, 3, _random_samples=s[0]), RuntimeError, "have 3 dimensions, got 2"),
    (lambda x, s: F.fractional_max_pool2d(x, 0, 3, _random_samples=s), RuntimeError, "kernel_size must be at least"),
    (lambda x, s: F.fractional_max_pool2d(x[:, :, :0], 1, 3, _random_samples=s), RuntimeError,
     "non-zero size for non-batch dimensions"),
    (lambda x, s: F.fractional_max_pool2d(x.long(), 2, 3, _random_samples=s), RuntimeError, "floating point"),
    (lambda x, s: F.fractional_max_pool3d(x[None], 2, (2, 3, 3)), RuntimeError,  # 3-D: out + k - 1 < size
     r"fractional_max_pool3d_out\(\): pool time 2 too large relative to input time 3"),
    (lambda x, s: F.fractional_max_pool3d(x, 2, (1, 4, 7)), RuntimeError, "pool width 2 too large"),
    (lambda x, s: F.fractional_max_pool3d(x, 2, (1, 4, 4), _random_samples=s[:, :2]), RuntimeError,
     r"size\(2\) equals to 3; got 2"),
])
def test_errors(call, error, match):
    x = mt.tensor(np.random.default_rng(4).standard_normal((2, 3, 7, 8)))
    with pytest.raises(error, match=match):
        call(x, mt.rand(2, 3, 2, dtype=mt.float64))


def test_module_checks_its_arguments():
    with pytest.raises(ValueError, match="kernel_size must be greater than 0"):
        nn.FractionalMaxPool3d(0, output_size=2)
    with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, 3, 0.5)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.0))


@pytest.mark.torch
@pytest.mark.parametrize("dims, shape, kernel, out, ratio", [
    (2, (2, 3, 11, 13), (2, 3), (6, 5), None), (2, (3, 25, 17), 3, None, (0.5, 0.7)),
    (3, (2, 2, 9, 10, 11), (2, 3, 2), (4, 5, 6), None), (3, (2, 8, 9, 12), 2, None, 0.6)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_against_torch_with_the_same_samples(dims, shape, kernel, out, ratio, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = values(rng, shape, True, np.dtype(dtype))
    batch = shape[0] if len(shape) == dims + 2 else 1
    samples = rng.random((batch, shape[-dims - 1], dims)).astype(dtype)
    t_x, m_x = torch.tensor(x, requires_grad=True), mt.tensor(x, requires_grad=True)
    t_pool = getattr(torch.nn, f"FractionalMaxPool{dims}d")(kernel, out, ratio, True, torch.tensor(samples))
    m_pool = getattr(nn, f"FractionalMaxPool{dims}d")(kernel, out, ratio, True, mt.tensor(samples))
    (t_y, t_i), (m_y, m_i) = t_pool(t_x), m_pool(m_x)
    np.testing.assert_array_equal(m_y.detach().numpy(), t_y.detach().numpy())
    np.testing.assert_array_equal(m_i.numpy(), t_i.numpy())
    g = rng.standard_normal(tuple(t_y.shape)).astype(dtype)
    (t_y * torch.tensor(g)).sum().backward()
    (m_y * mt.tensor(g)).sum().backward()
    np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-6)


@pytest.mark.torch
def test_intervals_match_torch_over_many_samples():
    """float32, float16 and bfloat16 samples: the indices (so the window starts) equal PyTorch's, the
    intervals computed with one rounding per operation in the samples' dtype."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    for t_dt, m_dt in ((torch.float32, mt.float32), (torch.float16, mt.float16), (torch.bfloat16, mt.bfloat16)):
        for _ in range(10):
            h, w = (int(v) for v in rng.integers(20, 200, 2))
            out = (int(rng.integers(2, h // 2)), int(rng.integers(2, w // 2)))
            x = rng.standard_normal((1, 4, h, w))
            samples = torch.rand(1, 4, 2).to(t_dt)
            t_i = torch.nn.functional.fractional_max_pool2d(torch.tensor(x).to(t_dt), 2, out, return_indices=True,
                                                            _random_samples=samples)[1]
            m_i = F.fractional_max_pool2d(mt.tensor(x).to(m_dt), 2, out, return_indices=True,
                                          _random_samples=mt.tensor(samples.float().numpy()).to(m_dt))[1]
            np.testing.assert_array_equal(m_i.numpy(), t_i.numpy())


@pytest.mark.torch
def test_error_messages_match_torch():
    torch = pytest.importorskip("torch")
    x = np.zeros((2, 3, 7, 8))
    for kernel, out, s_shape in [(3, (6, 6), (2, 3, 2)), (3, (5, 7), (2, 3, 2)), (2, 3, (1, 3, 2)),
                                 (2, 3, (2, 2, 2)), (2, 3, (2, 3, 3))]:
        s = np.random.default_rng(0).random(s_shape)
        with pytest.raises(RuntimeError) as t_err:
            torch.nn.functional.fractional_max_pool2d(torch.tensor(x), kernel, out, _random_samples=torch.tensor(s))
        with pytest.raises(RuntimeError) as m_err:
            F.fractional_max_pool2d(mt.tensor(x), kernel, out, _random_samples=mt.tensor(s))
        assert str(m_err.value) == str(t_err.value).splitlines()[0]


@pytest.mark.gpu
def test_on_cuda_matches_the_cpu():
    """The front ends on CUDA tensors (samples on the device, or drawn there), values, indices and
    gradients equal to the CPU's; adaptive_max_pool3d and lp_pool3d too."""
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(12)
    x = values(rng, (2, 3, 6, 7, 8), True)
    samples = rng.random((2, 3, 3))
    calls = [lambda t, s: F.fractional_max_pool3d(t, (2, 3, 2), (3, 4, 5), return_indices=True, _random_samples=s),
             lambda t, s: F.fractional_max_pool2d(t[:, :, 0], 2, output_ratio=0.5, return_indices=True,
                                                  _random_samples=s[..., :2]),
             lambda t, s: F.adaptive_max_pool3d(t, (4, 3, 5), return_indices=True),
             lambda t, s: (F.lp_pool3d(t, 2.0, 2), t)]
    for call in calls:
        outs = []
        for device in ("cpu", "cuda"):
            t = mt.tensor(x, device=device, requires_grad=True)
            y, idx = call(t, mt.tensor(samples, device=device))
            mt.nan_to_num(y).sum().backward()
            outs.append((y.detach().cpu().numpy(), idx.detach().cpu().numpy(), t.grad.cpu().numpy()))
        for got, want in zip(outs[1], outs[0]):
            np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    with pytest.raises(RuntimeError, match="device"):
        F.fractional_max_pool2d(mt.tensor(x[0], device="cuda"), 2, 3, _random_samples=mt.tensor(samples[..., :2]))
    mt.cuda.manual_seed(4)
    drawn = F.fractional_max_pool2d(mt.tensor(x[0], device="cuda"), 2, 3, return_indices=True)[1]
    assert drawn.device.type == "cuda" and drawn.shape == (3, 6, 3, 3)


def test_double_backward():
    """Second-order gradients (the backward is a scatter-add at the saved indices: linear in gy)."""
    from minitensor.autograd import gradgradcheck

    rng = np.random.default_rng(13)
    x = mt.tensor(rng.standard_normal((1, 2, 5, 4, 6)), requires_grad=True)
    s = mt.tensor(rng.random((1, 2, 3)))
    assert gradgradcheck(lambda t: F.fractional_max_pool3d(t, 2, (2, 2, 3), _random_samples=s) ** 2, [x])
    assert gradgradcheck(lambda t: F.fractional_max_pool2d(t[0, :, 0], 2, (2, 3), _random_samples=s[..., :2]) ** 2, [x])
    assert gradgradcheck(lambda t: F.adaptive_max_pool3d(t, (2, 3, 4)) ** 2, [x])
    assert gradgradcheck(lambda t: F.lp_pool3d(t.abs() + 1, 2, 2), [x])
