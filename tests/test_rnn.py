"""RNN, LSTM, GRU and their cells against a float64 NumPy reference of PyTorch's equations (written
gate by gate here), gradients by gradcheck, PyTorch's parameter names, shapes and errors."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from test_nn_modules import close, module_gradcheck, npa, t64

MODES = {"RNN_TANH": lambda **kw: nn.RNN(nonlinearity="tanh", **kw),
         "RNN_RELU": lambda **kw: nn.RNN(nonlinearity="relu", **kw),
         "LSTM": lambda **kw: nn.LSTM(**kw),
         "GRU": lambda **kw: nn.GRU(**kw)}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def cell_ref(mode, x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One step of PyTorch's documented equations, each gate from its own rows of the weights."""
    H = h.shape[-1]
    b_ih = np.zeros(w_ih.shape[0]) if b_ih is None else b_ih
    b_hh = np.zeros(w_hh.shape[0]) if b_hh is None else b_hh

    def gate(k, src, w, b):  # rows k*H:(k+1)*H of one weight
        return src @ w[k * H:(k + 1) * H].T + b[k * H:(k + 1) * H]

    if mode in ("RNN_TANH", "RNN_RELU"):
        pre = gate(0, x, w_ih, b_ih) + gate(0, h, w_hh, b_hh)
        return (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)), None
    if mode == "LSTM":
        i = sigmoid(gate(0, x, w_ih, b_ih) + gate(0, h, w_hh, b_hh))
        f = sigmoid(gate(1, x, w_ih, b_ih) + gate(1, h, w_hh, b_hh))
        g = np.tanh(gate(2, x, w_ih, b_ih) + gate(2, h, w_hh, b_hh))
        o = sigmoid(gate(3, x, w_ih, b_ih) + gate(3, h, w_hh, b_hh))
        c_new = f * c + i * g
        return o * np.tanh(c_new), c_new
    r = sigmoid(gate(0, x, w_ih, b_ih) + gate(0, h, w_hh, b_hh))
    z = sigmoid(gate(1, x, w_ih, b_ih) + gate(1, h, w_hh, b_hh))
    n = np.tanh(gate(2, x, w_ih, b_ih) + r * gate(2, h, w_hh, b_hh))
    return (1 - z) * n + z * h, None


def rnn_ref(mode, module, x, h0=None, c0=None, drop_between_layers=False):
    """Multi-layer, (bi)directional reference; x time-major (L, N, I). Returns (out, h_n, c_n)."""
    P = {k: npa(v) for k, v in module.state_dict().items()}
    L, N, _ = x.shape
    D = 2 if module.bidirectional else 1
    H = module.hidden_size
    h0 = np.zeros((module.num_layers * D, N, H)) if h0 is None else h0
    c0 = np.zeros_like(h0) if c0 is None else c0
    layer_in, hn, cn = x, [], []
    for layer in range(module.num_layers):
        outs = []
        for d in range(D):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            h, c = h0[layer * D + d], c0[layer * D + d]
            out = np.zeros((L, N, H))
            for t in (range(L - 1, -1, -1) if d else range(L)):
                h, c = cell_ref(mode, layer_in[t], h, c, P["weight_ih" + sfx], P["weight_hh" + sfx],
                                P.get("bias_ih" + sfx), P.get("bias_hh" + sfx))
                out[t] = h
            outs.append(out)
            hn.append(h)
            cn.append(c)
        layer_in = np.concatenate(outs, axis=2)
        if drop_between_layers and layer < module.num_layers - 1:
            layer_in = np.zeros_like(layer_in)
    return layer_in, np.stack(hn), (np.stack(cn) if mode == "LSTM" else None)


def make(mode, **kw):
    return MODES[mode](input_size=3, hidden_size=4, **kw).double()


def initial_state(mode, module, N, seed=1, requires_grad=False):
    r = np.random.default_rng(seed)
    shape = (module.num_layers * (2 if module.bidirectional else 1), N, module.hidden_size)
    h0, c0 = r.standard_normal(shape), r.standard_normal(shape)
    hx = (t64(h0, requires_grad), t64(c0, requires_grad)) if mode == "LSTM" else t64(h0, requires_grad)
    return hx, h0, (c0 if mode == "LSTM" else None)


def split_out(mode, result):
    out, hidden = result
    if mode == "LSTM":
        return out, hidden[0], hidden[1]
    return out, hidden, None


# ------------------------------------------------------------------------------------------ forward
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("num_layers, bidirectional, batch_first, with_state, bias", [
    (1, False, False, False, True),
    (2, False, True, True, True),
    (2, True, False, True, True),
    (2, True, True, False, False),
    (3, True, False, True, True),
])
def test_forward_matches_reference(mode, num_layers, bidirectional, batch_first, with_state, bias):
    m = make(mode, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    L, N = 5, 3
    x = np.random.default_rng(0).standard_normal((L, N, 3))
    hx, h0, c0 = initial_state(mode, m, N) if with_state else (None, None, None)
    inp = x.transpose(1, 0, 2) if batch_first else x
    out, hn, cn = split_out(mode, m(t64(inp), hx))
    ref_out, ref_hn, ref_cn = rnn_ref(mode, m, x, h0, c0)
    if batch_first:
        ref_out = ref_out.transpose(1, 0, 2)
    D = 2 if bidirectional else 1
    assert out.shape == ((N, L, D * 4) if batch_first else (L, N, D * 4))
    assert hn.shape == (num_layers * D, N, 4)
    close(out, ref_out, rtol=1e-10, atol=1e-12)
    close(hn, ref_hn, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        close(cn, ref_cn, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", list(MODES))
def test_float32_default_and_dtype(mode):
    m = MODES[mode](input_size=3, hidden_size=4)
    assert all(p.dtype == mt.float32 for p in m.parameters())
    out, _ = m(mt.randn(2, 5, 3))
    assert out.dtype == mt.float32
    with pytest.raises(ValueError, match="input must have the type"):
        m(mt.randn(2, 5, 3, dtype=mt.float64))


@pytest.mark.parametrize("mode", list(MODES))
def test_unbatched_input_equals_batch_of_one(mode):
    m = make(mode, num_layers=2, bidirectional=True)
    x = t64(np.random.default_rng(2).standard_normal((6, 3)))
    hx, h0, c0 = initial_state(mode, m, 1)
    batched = split_out(mode, m(x.unsqueeze(1), hx))
    if mode == "LSTM":
        hx_unbatched = (hx[0].squeeze(1), hx[1].squeeze(1))
    else:
        hx_unbatched = hx.squeeze(1)
    single = split_out(mode, m(x, hx_unbatched))
    assert single[0].shape == (6, 8) and single[1].shape == (4, 4)
    close(single[0], npa(batched[0])[:, 0])
    close(single[1], npa(batched[1])[:, 0])
    if mode == "LSTM":
        close(single[2], npa(batched[2])[:, 0])


def test_dropout_between_layers_in_training_only():
    m = make("GRU", num_layers=2, dropout=1.0)  # p=1: the second layer sees zeros while training
    x = np.random.default_rng(3).standard_normal((4, 2, 3))
    out, hn = m(t64(x))
    ref_out, ref_hn, _ = rnn_ref("GRU", m, x, drop_between_layers=True)
    close(out, ref_out, rtol=1e-10)
    close(hn[0], ref_hn[0], rtol=1e-10)  # the first layer's final state is not dropped
    m.eval()
    out, _ = m(t64(x))
    close(out, rnn_ref("GRU", m, x)[0], rtol=1e-10)


# ---------------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("mode", list(MODES))
def test_gradcheck_two_layer_bidirectional_with_state(mode):
    m = MODES[mode](input_size=2, hidden_size=2, num_layers=2, bidirectional=True)
    m.double()
    x = t64(np.random.default_rng(4).standard_normal((3, 2, 2)), requires_grad=True)
    hx, _, _ = initial_state(mode, m, 2, requires_grad=True)
    inputs = (x, *hx) if mode == "LSTM" else (x, hx)

    class WithState(nn.Module):  # so module_gradcheck also perturbs the initial states
        def __init__(self):
            super().__init__()
            self.rnn = m

        def forward(self, x, *state):
            return self.rnn(x, tuple(state) if mode == "LSTM" else state[0])

    assert module_gradcheck(WithState(), *inputs)


def test_gradcheck_batch_first_gru():
    m = nn.GRU(2, 3, batch_first=True)
    assert module_gradcheck(m, t64(np.random.default_rng(5).standard_normal((2, 4, 2)), requires_grad=True))


# -------------------------------------------------------------------------------------------- cells
@pytest.mark.parametrize("cls, mode", [(nn.RNNCell, "RNN_TANH"), (nn.LSTMCell, "LSTM"), (nn.GRUCell, "GRU")])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_reference(cls, mode, bias):
    cell = cls(3, 4, bias=bias).double()
    r = np.random.default_rng(6)
    x, h, c = r.standard_normal((5, 3)), r.standard_normal((5, 4)), r.standard_normal((5, 4))
    W = {k: npa(v) for k, v in cell.state_dict().items()}
    ref_h, ref_c = cell_ref(mode, x, h, c, W["weight_ih"], W["weight_hh"], W.get("bias_ih"), W.get("bias_hh"))
    out = cell(t64(x), (t64(h), t64(c)) if mode == "LSTM" else t64(h))
    if mode == "LSTM":
        close(out[0], ref_h, rtol=1e-10)
        close(out[1], ref_c, rtol=1e-10)
    else:
        close(out, ref_h, rtol=1e-10)
    # unbatched and default (zero) state
    zero_h, zero_c = cell_ref(mode, x[0], np.zeros(4), np.zeros(4), W["weight_ih"], W["weight_hh"],
                              W.get("bias_ih"), W.get("bias_hh"))
    out = cell(t64(x[0]))
    close(out[0] if mode == "LSTM" else out, zero_h, rtol=1e-10)


def test_relu_cell_and_cell_gradcheck():
    cell = nn.RNNCell(2, 3, nonlinearity="relu").double()
    x = np.random.default_rng(7).standard_normal((4, 2))
    W = {k: npa(v) for k, v in cell.state_dict().items()}
    ref, _ = cell_ref("RNN_RELU", x, np.zeros((4, 3)), None, W["weight_ih"], W["weight_hh"], W["bias_ih"],
                      W["bias_hh"])
    close(cell(t64(x)), ref, rtol=1e-10)
    assert module_gradcheck(nn.LSTMCell(2, 2), t64(x, requires_grad=True))
    assert module_gradcheck(nn.GRUCell(2, 2), t64(x, requires_grad=True))


# ---------------------------------------------------------------------------- names, shapes, errors
def test_parameter_names_and_shapes_follow_pytorch():
    lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    expected = []
    for layer in (0, 1):
        for sfx in ("", "_reverse"):
            expected += [f"weight_ih_l{layer}{sfx}", f"weight_hh_l{layer}{sfx}", f"bias_ih_l{layer}{sfx}",
                         f"bias_hh_l{layer}{sfx}"]
    assert list(lstm.state_dict()) == expected
    shapes = dict((k, tuple(v.shape)) for k, v in lstm.state_dict().items())
    assert shapes["weight_ih_l0"] == (20, 3) and shapes["weight_ih_l1_reverse"] == (20, 10)
    assert shapes["weight_hh_l1"] == (20, 5) and shapes["bias_hh_l0_reverse"] == (20,)
    gru = nn.GRU(3, 5, bias=False)
    assert list(gru.state_dict()) == ["weight_ih_l0", "weight_hh_l0"]
    assert gru.weight_ih_l0.shape == (15, 3)
    assert nn.RNN(3, 5).weight_hh_l0.shape == (5, 5)
    assert [[p.shape for p in ws] for ws in nn.RNN(3, 5, bias=False).all_weights] == [[(5, 3), (5, 5)]]
    assert list(nn.LSTMCell(3, 5).state_dict()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    assert nn.GRUCell(3, 5).weight_hh.shape == (15, 5)


def test_constructor_checks():
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(2, 3, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(2, 3, dropout=1.5)
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(2, 3, dropout=0.5)
    with pytest.raises(ValueError, match="hidden_size"):
        nn.LSTM(2, 0)
    with pytest.raises(ValueError, match="num_layers"):
        nn.LSTM(2, 3, num_layers=0)
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(2, 3, proj_size=2)


def test_forward_checks():
    m = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(RuntimeError, match="input_size. Expected 3, got 5"):
        m(mt.randn(2, 1, 5))
    with pytest.raises(ValueError, match="2D or 3D"):
        m(mt.randn(2, 1, 1, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 1, 4\), got \(1, 1, 4\)"):
        m(mt.randn(2, 1, 3), (mt.zeros(1, 1, 4), mt.zeros(2, 1, 4)))
    with pytest.raises(RuntimeError, match="should also be 3-D"):
        m(mt.randn(2, 1, 3), (mt.zeros(2, 4), mt.zeros(2, 4)))
    with pytest.raises(TypeError, match=r"\(h_0, c_0\)"):
        m(mt.randn(2, 1, 3), mt.zeros(2, 1, 4))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        nn.GRU(3, 4)(mt.randn(2, 1, 3), mt.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="1D or 2D"):
        nn.GRUCell(3, 4)(mt.randn(1, 1, 3))


def test_training_reduces_loss():
    """A few SGD steps on a fixed batch lower the loss (gradients point the right way through time)."""
    mt.manual_seed(0)
    m = nn.LSTM(2, 8, batch_first=True)
    head = nn.Linear(8, 1)
    x = mt.randn(16, 6, 2)
    y = x.sum(dim=(1, 2)).unsqueeze(1)
    params = list(m.parameters()) + list(head.parameters())
    losses = []
    for _ in range(30):
        out, (h, _) = m(x)
        loss = nn.functional.mse_loss(head(h[-1]), y)
        for p in params:
            p.grad = None
        loss.backward()
        with mt.no_grad():
            for p in params:
                p -= 0.1 * p.grad
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


# ------------------------------------------------------------------------------- optional: torch
@pytest.mark.torch
@pytest.mark.parametrize("mode", ["RNN_TANH", "LSTM", "GRU"])
def test_against_torch_with_copied_weights(mode):
    torch = pytest.importorskip("torch")
    ours = make(mode, num_layers=2, bidirectional=True, batch_first=True)
    cls = {"RNN_TANH": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}[mode]
    theirs = cls(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(8).standard_normal((2, 5, 3))
    out, hidden = ours(t64(x))
    t_out, t_hidden = theirs(torch.from_numpy(x))
    close(out, t_out.detach().numpy(), rtol=1e-9)
    h, t_h = (hidden[0], t_hidden[0]) if mode == "LSTM" else (hidden, t_hidden)
    close(h, t_h.detach().numpy(), rtol=1e-9)
