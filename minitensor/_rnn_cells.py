"""PyTorch's functional recurrent cells, weights passed in (what ``nn.RNNCell`` / ``LSTMCell`` / ``GRUCell``
compute, and what exported and hand-written RNN code calls): ``rnn_tanh_cell``, ``rnn_relu_cell``,
``lstm_cell``, ``gru_cell``. Inputs (N, I) with hidden state (N, H); weights w_ih (G H, I), w_hh (G H, H) for G
gates in PyTorch's order (LSTM: i, f, g, o; GRU: r, z, n)."""
from __future__ import annotations

from typing import Any

from .nn import functional as F
from .tensor import Tensor

__all__ = ["gru_cell", "lstm_cell", "rnn_relu_cell", "rnn_tanh_cell"]


def _gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
           b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    return F.linear(input, w_ih, b_ih), F.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """h' = tanh(x w_ih^T + b_ih + h w_hh^T + b_hh)."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """h' = relu(x w_ih^T + b_ih + h w_hh^T + b_hh)."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def lstm_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """(h', c') from ``hx = (h, c)``: gates i, f, g, o of x w_ih^T + b_ih + h w_hh^T + b_hh;
    c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c')."""
    if not isinstance(hx, (tuple, list)) or len(hx) != 2:
        raise RuntimeError("lstm_cell: expected hx to contain 2 tensors, (h, c)")
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """h' = (1 - z) n + z h with r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r h_n), where
    x_* = chunks of x w_ih^T + b_ih and h_* of h w_hh^T + b_hh (the reset gate scales h_n after its bias,
    as PyTorch's)."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    ir, iz, in_ = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n)
