"""The LSTM recurrence of one layer and direction as one Function over the whole sequence (``nn.LSTM`` uses it
for unpacked input).

Composed per step (a linear, an add, a chunk, five activations, four products and a sum) the recurrence
made ~15 graph nodes per time step, each with its own allocation and pass, and each step's slice of the
input projection a node whose backward zero-filled a gradient of all of it (O(L^2) work). Here the backend
runs one GEMM and one fused cell update per step, forward and backward (``backends/generic/recurrent.py``),
and dW_hh is one GEMM over every step.

    gi (L, N, 4H) = x W_ih^T + b_ih + b_hh (the caller's one GEMM),  h0, c0 (N, H),  w_hh (4H, H)
    -> y (L + 1, N, H): the hidden states h_1 .. h_L, then the last cell c_L
"""
from __future__ import annotations

from typing import Any

from ..amp.autocast_mode import is_autocast_enabled
from ..autograd import function as _function
from ..autograd.function import ArrayFunction
from ..autograd.recording import has_rec
from ..backends.base import Backend
from ..tensor import Tensor
from .linalg import linear

__all__ = ["lstm_sequence", "lstm_layer", "lstm_applies"]


class LSTMSequence(ArrayFunction):
    """gi, h0, c0, w_hh -> y (see the module). Saves the cells and activated gates (5 and 6: constants to a
    double backward, which recomputes them from the inputs)."""
    derived_saves = {5: None, 6: None}

    @staticmethod
    def forward(ctx: Any, B: Backend, gi: Any, h0: Any, c0: Any, w_hh: Any) -> Any:
        y, cs, acts = B.lstm_forward(gi, h0, c0, w_hh)
        ctx.save_for_backward(gi, h0, c0, w_hh, y, cs, acts)
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        gi, h0, c0, w_hh, y, cs, acts = ctx.saved_arrays
        if has_rec((gy, gi, h0, c0, w_hh)):  # create_graph: the forward again, recorded, so that the
            # gradient's dependence on the inputs (through the gates and cells) is in the graph too
            # (the recording backend runs the generic bodies on the facades)
            y, cs, acts = B.lstm_forward(gi, h0, c0, w_hh)
        return B.lstm_backward(gy, h0, c0, w_hh, y, cs, acts)


def lstm_sequence(gi: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The LSTM over gi's L steps: (output (L, N, H), h_L (N, H), c_L (N, H)), views of one Function's output."""
    y = LSTMSequence.apply(gi, h0, c0, w_hh)
    steps = gi.shape[0]
    return y[:steps], y[steps - 1], y[steps]


def lstm_applies(x: Tensor, w_ih: Tensor, w_hh: Tensor, states: tuple[Tensor, ...]) -> bool:
    """Whether ``lstm_layer`` applies: one dtype throughout (autocast's
    16-bit projections take the per-step path, as PyTorch's CPU LSTM), and no ONNX export in progress (its
    tracer writes the per-step ops)."""
    dtype = x.dtype
    return (_function.tracer is None and w_ih.dtype == dtype and w_hh.dtype == dtype
            and all(s.dtype == dtype for s in states) and not is_autocast_enabled(x.device.type))


def lstm_layer(x: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
               b_hh: Tensor | None, reverse: bool) -> tuple[Tensor, Tensor, Tensor]:
    """One LSTM layer and direction over time-major x (L, N, H_in): (output (L, N, H), h_n, c_n). Both biases
    go into the input projection's GEMM (b_ih + b_hh, a (4H,) add)."""
    bias = b_ih + b_hh if b_ih is not None and b_hh is not None else b_ih if b_ih is not None else b_hh
    gi = linear(x.flip(0) if reverse else x, w_ih, bias)
    out, h_n, c_n = lstm_sequence(gi, h0, c0, w_hh)
    return (out.flip(0) if reverse else out), h_n, c_n
