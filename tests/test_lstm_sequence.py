"""The LSTM recurrence as one Function (functional/recurrent.py, backends' lstm_forward/lstm_backward): forward
and backward against a float64 NumPy reference written step by step (BPTT by hand), on the generic body and
on the CPU's Numba float32 cells; nn.LSTM's use of it; its double backward; the float32 tanh's accuracy."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.autograd import gradcheck, gradgradcheck
from minitensor.backends import get_backend
from minitensor.backends.base import Backend
from minitensor.functional.recurrent import LSTMSequence, lstm_sequence

CPU = get_backend("cpu")


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference(gi, h0, c0, w_hh, gy):
    """float64: y (L + 1, N, H) = (h_1 .. h_L, c_L) and the gradients (dgi, dh0, dc0, dw_hh) of <gy, y>."""
    gi, h0, c0, w_hh, gy = (np.asarray(a, np.float64) for a in (gi, h0, c0, w_hh, gy))
    steps, hidden = gi.shape[0], h0.shape[-1]
    hs, cs, gates = [h0], [c0], []
    for t in range(steps):
        z = gi[t] + hs[-1] @ w_hh.T
        i, f, o = (sigmoid(z[:, k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
        g = np.tanh(z[:, 2 * hidden:3 * hidden])
        cs.append(f * cs[-1] + i * g)
        hs.append(o * np.tanh(cs[-1]))
        gates.append((i, f, g, o))
    y = np.stack(hs[1:] + [cs[-1]])
    dgi, dw = np.zeros_like(gi), np.zeros_like(w_hh)
    dh, dc = np.zeros_like(h0), gy[steps].copy()
    for t in reversed(range(steps)):
        i, f, g, o = gates[t]
        dh = dh + gy[t]
        tc = np.tanh(cs[t + 1])
        dc = dc + dh * o * (1 - tc ** 2)
        dz = np.concatenate([dc * g * i * (1 - i), dc * cs[t] * f * (1 - f), dc * i * (1 - g ** 2),
                             dh * tc * o * (1 - o)], axis=-1)
        dgi[t] = dz
        dw += dz.T @ hs[t]
        dh, dc = dz @ w_hh, dc * f
    return y, (dgi, dh, dc, dw)


def data(dtype, steps=5, batch=3, hidden=4, seed=0):
    r = np.random.default_rng(seed)
    gi = r.standard_normal((steps, batch, 4 * hidden)) * 2  # past the activations' linear parts
    h0, c0 = r.standard_normal((2, batch, hidden))
    w_hh = r.standard_normal((4 * hidden, hidden)) * 0.5
    gy = r.standard_normal((steps + 1, batch, hidden))
    return [a.astype(dtype) for a in (gi, h0, c0, w_hh, gy)]


BODIES = {"cpu": lambda: CPU, "generic": lambda: None}


def _run(body, gi, h0, c0, w_hh, gy):
    """The backend's forward and backward (``generic``: RecurrentOps' bodies, bypassing the CPU's kernels)."""
    if body == "generic":
        y, cs, acts = Backend.lstm_forward(CPU, gi, h0, c0, w_hh)
        return y, Backend.lstm_backward(CPU, gy, h0, c0, w_hh, y, cs, acts)
    y, cs, acts = CPU.lstm_forward(gi, h0, c0, w_hh)
    return y, CPU.lstm_backward(gy, h0, c0, w_hh, y, cs, acts)


@pytest.mark.parametrize("body", ["cpu", "generic"])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_forward_and_backward_match_the_float64_reference(body, dtype, tol):
    args = data(dtype)
    y_ref, grads_ref = reference(*args)
    y, grads = _run(body, *args)
    assert y.dtype == dtype and y.shape == y_ref.shape
    np.testing.assert_allclose(y, y_ref, rtol=tol, atol=tol)
    for got, want in zip(grads, grads_ref):
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("body", ["cpu", "generic"])
def test_one_step_and_saturated_gates(body):
    """L = 1 (no recurrence GEMM in dW) and pre-activations far past tanh's float32 range."""
    gi, h0, c0, w_hh, gy = data(np.float32, steps=1)
    gi = gi * 20
    y_ref, grads_ref = reference(gi, h0, c0, w_hh, gy)
    y, grads = _run(body, gi, h0, c0, w_hh, gy)
    np.testing.assert_allclose(y, y_ref, rtol=2e-5, atol=2e-5)
    for got, want in zip(grads, grads_ref):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


def test_the_function_through_autograd_and_its_double_backward():
    gi, h0, c0, w_hh, gy = (mt.tensor(a, requires_grad=True) for a in data(np.float64, steps=3, hidden=2))
    assert gradcheck(lambda *a: LSTMSequence.apply(*a), [gi, h0, c0, w_hh])
    assert gradgradcheck(lambda *a: LSTMSequence.apply(*a), [gi, h0, c0, w_hh])
    out, h_n, c_n = lstm_sequence(gi, h0, c0, w_hh)
    assert out.shape == (3, 3, 2) and h_n.shape == c_n.shape == (3, 2)
    np.testing.assert_array_equal(h_n.detach().numpy(), out[-1].detach().numpy())


def _grad_names(t):
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions if not hasattr(n, "variable"))  # not AccumulateGrad
    return names, len(seen)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_nn_lstm_runs_one_node_per_layer_and_direction(bidirectional):
    """Before: ~15 nodes per time step (linear, add, chunk, activations, products) and an unbind per layer."""
    mt.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=bidirectional)
    out, _ = lstm(mt.randn(20, 2, 3))
    names, count = _grad_names(out)
    assert "LSTMSequence" in names and "Sigmoid" not in names
    assert count < 40


@pytest.mark.parametrize("bidirectional", [False, True])
def test_nn_lstm_matches_the_float64_reference_with_states(bidirectional):
    """nn.LSTM (both biases, two layers, given h0 and c0) against the reference run layer by layer."""
    mt.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=bidirectional).double()
    d = 2 if bidirectional else 1
    x = mt.randn(6, 2, 3, dtype=mt.float64, requires_grad=True)
    h0 = mt.randn(2 * d, 2, 4, dtype=mt.float64, requires_grad=True)
    c0 = mt.randn(2 * d, 2, 4, dtype=mt.float64, requires_grad=True)
    out, (h_n, c_n) = lstm(x, (h0, c0))
    (out.sum() + (h_n * c_n).sum()).backward()
    layer_in, finals_h, finals_c = x.detach().numpy(), [], []
    for layer in range(2):
        outs = []
        for direction in range(d):
            sfx = f"_l{layer}" + ("_reverse" if direction else "")
            w_ih, w_hh, b_ih, b_hh = (getattr(lstm, n + sfx).detach().numpy()
                                      for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
            src = layer_in[::-1] if direction else layer_in
            k = layer * d + direction
            y, _ = reference(src @ w_ih.T + b_ih + b_hh, h0.detach().numpy()[k], c0.detach().numpy()[k], w_hh,
                             np.zeros((7, 2, 4)))
            outs.append(y[:-1][::-1] if direction else y[:-1])
            finals_h.append(y[-2])
            finals_c.append(y[-1])
        layer_in = np.concatenate(outs, -1)
    np.testing.assert_allclose(out.detach().numpy(), layer_in, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_n.detach().numpy(), np.stack(finals_h), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c_n.detach().numpy(), np.stack(finals_c), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, h, c: sum(t.sum() for t in (lstm(x, (h, c))[0],) + lstm(x, (h, c))[1]),
                     [x, h0, c0])


def test_autocast_and_packed_input_keep_the_per_step_path():
    mt.manual_seed(0)
    lstm = nn.LSTM(3, 4)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        out, _ = lstm(mt.randn(5, 2, 3))
    assert "LSTMSequence" not in _grad_names(out)[0]
    packed = nn.utils.rnn.pack_padded_sequence(mt.randn(5, 2, 3), [5, 3])
    out, _ = lstm(packed)
    assert "LSTMSequence" not in _grad_names(out.data)[0]
