"""The CPU's one-pass leaky ReLU (forward and backward) and tanh / sigmoid backwards (backends/cpu/activation.py):
against float64 references and bit for bit against the generic NumPy bodies (same order of operations, in the
arrays' dtype), with special values and on every dense layout; the generic body where the loops do not apply
(small arrays, gapped views, mismatched layouts, slopes outside (0, 1])."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from helpers import kernel_launches
from minitensor.backends import get_backend
from minitensor.backends.cpu.numba_kernels import load
from minitensor.backends.generic.activation import ActivationOps

CPU = get_backend("cpu")
needs_numba = pytest.mark.skipif(load("activation") is None, reason="no Numba: the generic body runs")
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-30, -1e-30, 0.5]
SHAPE = (8, 16, 12, 12)  # above the kernels' minimum size


def _arrays(seed: int, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """(gy, v): random (8, 16, 12, 12) arrays with the special values mixed into both."""
    r = np.random.default_rng(seed)
    a = np.concatenate([r.standard_normal(2 * np.prod(SHAPE) - 2 * len(SPECIAL)), SPECIAL, SPECIAL]).astype(dtype)
    r.shuffle(a)
    return a[:np.prod(SHAPE)].reshape(SHAPE), a[np.prod(SHAPE):].reshape(SHAPE)


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    """a in C order, channels-last and Fortran order (same values)."""
    cl = np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    return [a, cl, np.asfortranarray(a)]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["tanh_backward", "sigmoid_backward"])
def test_tanh_and_sigmoid_backwards_match_the_generic_body_bit_for_bit(name, dtype):
    gy, y = _arrays(1, dtype)
    y = np.tanh(y) if name == "tanh_backward" else (np.tanh(y / 2) + 1) / 2  # outputs, NaN kept
    want = getattr(ActivationOps, name)(CPU, gy, y)
    for g_l, y_l in zip(_layouts(gy), _layouts(y)):
        got: list = []
        assert kernel_launches(lambda: got.append(getattr(CPU, name)(g_l, y_l))) == [name]
        np.testing.assert_array_equal(got[0], want)
        assert got[0].strides == g_l.strides  # gx has gy's layout
    g64, y64 = gy.astype(np.float64), y.astype(np.float64)
    ref = g64 * (1 - y64 ** 2 if name == "tanh_backward" else y64 * (1 - y64))
    finite = np.isfinite(ref)
    # y^2 (or y) rounded in the dtype before 1 - it: an error of eps |gy| (1 + y^2), large relative to 1 - y^2
    # where |y| nears 1 (PyTorch's tanh_backward computes the same from the float32 output)
    bound = 4 * np.finfo(dtype).eps * np.abs(g64) * (1 + y64 ** 2)
    with np.errstate(invalid="ignore"):  # inf - inf where gy is infinite (not compared)
        error = np.abs(want - ref)
    assert (error[finite] <= bound[finite]).all()


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("slope", [0.01, 0.2, 1.0])
def test_leaky_relu_and_backward_match_the_generic_body_bit_for_bit(slope, dtype):
    gy, x = _arrays(2, dtype)
    want_y = ActivationOps.leaky_relu(CPU, x, slope)
    want_gx = ActivationOps.leaky_relu_backward(CPU, gy, x, slope)
    for g_l, x_l in zip(_layouts(gy), _layouts(x)):
        got: list = []
        launched = kernel_launches(lambda: got.extend([CPU.leaky_relu(x_l, slope),
                                                       CPU.leaky_relu_backward(g_l, x_l, slope)]))
        assert launched == ["leaky_relu", "leaky_relu_backward"]
        np.testing.assert_array_equal(got[0], want_y)
        assert np.array_equal(np.signbit(got[0]), np.signbit(want_y))  # -0 kept
        np.testing.assert_array_equal(got[1], want_gx)
    x64, g64 = x.astype(np.float64), gy.astype(np.float64)
    s = float(dtype(slope))
    np.testing.assert_array_equal(want_y, np.where(x64 > 0, x64, x64 * s).astype(dtype))
    np.testing.assert_array_equal(want_gx, np.where(x64 > 0, g64, g64 * s).astype(dtype))


@needs_numba
def test_the_generic_body_serves_where_the_loops_do_not_apply():
    gy, y = _arrays(3, np.float32)
    small = gy[:1, :1, :4, :4]
    gapped = gy[..., ::2]
    cases = [lambda: CPU.tanh_backward(small, np.tanh(small)),  # below the minimum size
             lambda: CPU.sigmoid_backward(gapped, y[..., ::2]),  # a gapped view
             lambda: CPU.tanh_backward(gy, np.asfortranarray(y)),  # layouts differ
             lambda: CPU.leaky_relu(y, 1.5), lambda: CPU.leaky_relu(y, -0.1),  # slopes outside (0, 1]
             lambda: CPU.leaky_relu_backward(gy, y, 2.0),
             lambda: CPU.tanh_backward(gy, y.astype(np.float64))]  # dtypes differ
    for case in cases:
        assert kernel_launches(case) == []
    np.testing.assert_array_equal(CPU.leaky_relu(y, 1.5), np.minimum(y, y * np.float32(1.5)))


@pytest.mark.torch
@pytest.mark.parametrize("op", ["leaky_relu", "tanh", "sigmoid"])
def test_forward_and_backward_match_pytorch(op):
    torch = pytest.importorskip("torch")
    gy, x = _arrays(4, np.float32)
    t = mt.tensor(x, requires_grad=True)
    tt = torch.tensor(x, requires_grad=True)
    fn = {"leaky_relu": lambda a, F: F.leaky_relu(a, 0.2), "tanh": lambda a, F: a.tanh(),
          "sigmoid": lambda a, F: a.sigmoid()}[op]
    y, ty = fn(t, mt.nn.functional), fn(tt, torch.nn.functional)
    y.backward(mt.tensor(gy))
    ty.backward(torch.tensor(gy))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=2e-6, atol=1e-7)
    # atol: tanh's output differs from PyTorch's by an ulp, and 1 - y^2 cancels near |y| = 1 (see above)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=2e-6, atol=1e-6, equal_nan=True)
