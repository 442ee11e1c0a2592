"""Recurrent layers ``RNN``, ``LSTM``, ``GRU`` and their one-step cells, with PyTorch's equations, gate
orders, parameter names and shapes.

For one layer and direction, the input projection of every time step is one matmul,
gi = x W_ih^T + b_ih of shape (L, N, G); only the recurrence h_{t-1} -> h_t loops over time. Gates
(G = gates * hidden_size, in PyTorch's order):

    RNN:  h' = tanh(gi + h W_hh^T + b_hh)                          (or relu)
    LSTM: i, f, g, o = split(gi + h W_hh^T + b_hh)
          c' = sigmoid(f) c + sigmoid(i) tanh(g);  h' = sigmoid(o) tanh(c')
    GRU:  r, z, n gates; gh = h W_hh^T + b_hh
          r = sigmoid(gi_r + gh_r);  z = sigmoid(gi_z + gh_z)
          n = tanh(gi_n + r * gh_n);  h' = (1 - z) n + z h
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Callable, Sequence

from ...functional import cat, stack
from ...functional.recurrent import lstm_applies, lstm_layer
from ...tensor import Tensor
from ...creation import empty, zeros
from .. import functional as F, init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module
from .utils import changed_options, optional_parameters

State = tuple[Tensor, ...]  # (h,) or, for LSTM, (h, c)


# ----------------------------------------------------------------------------------- one time step
def _rnn_tanh_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    h, = state
    return (F.tanh(gi + F.linear(h, w_hh, b_hh)),)


def _rnn_relu_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    h, = state
    return (F.relu(gi + F.linear(h, w_hh, b_hh)),)


def _lstm_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
    return F.sigmoid(o) * F.tanh(c), c


def _gru_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None) -> State:
    h, = state
    hidden = h.shape[-1]
    gi_rz, gi_n = gi.split([2 * hidden, hidden], -1)
    gh_rz, gh_n = F.linear(h, w_hh, b_hh).split([2 * hidden, hidden], -1)
    r, z = F.sigmoid(gi_rz + gh_rz).chunk(2, -1)
    n = F.tanh(gi_n + r * gh_n)
    return (n + z * (h - n),)  # = (1 - z) n + z h


_STEPS: dict[str, Callable[..., State]] = {
    "RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step, "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _reset_uniform(module: Module, hidden_size: int) -> None:
    """PyTorch's recurrent init: every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -bound, bound)


def _check_hidden(name: str, t: Tensor, expected: tuple[int, ...]) -> None:
    if tuple(t.shape) != expected:
        raise RuntimeError(f"Expected {name} size {expected}, got {tuple(t.shape)}")


# ---------------------------------------------------------------------------------- multi-layer RNNs
class RNNBase(Module):
    """Shared by RNN, LSTM and GRU: parameters per layer and direction, and the layer loop.

    Input (L, N, H_in) ((N, L, H_in) with ``batch_first``, or unbatched (L, H_in)), or a PackedSequence
    (then the output is one too, and h_n holds each sequence's state at its own last step); states
    (num_layers * D, N, H_out) with D = 2 when ``bidirectional``. Parameters, per layer k:
    weight_ih_l{k} (G, H_in or D * H_out), weight_hh_l{k} (G, H_out), bias_ih_l{k}, bias_hh_l{k} (G,),
    and the same with suffix "_reverse" for the backward direction. ``dropout`` applies to the outputs
    of every layer but the last, in training mode.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}")
        for what, n in (("input_size", input_size), ("hidden_size", hidden_size)):  # PyTorch's checks and words
            if not isinstance(n, int):
                raise TypeError(f"{what} should be of type int, got: {type(n).__name__}")
            if n <= 0:
                raise ValueError(f"{what} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size != 0:
            raise NotImplementedError("LSTM proj_size is not supported in minitensor")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {f"weight_ih{suffix}": (gate_size, layer_input),
                          f"weight_hh{suffix}": (gate_size, hidden_size)}
                if bias:
                    shapes.update({f"bias_ih{suffix}": (gate_size,), f"bias_hh{suffix}": (gate_size,)})  # type: ignore[dict-item]
                for name, shape in shapes.items():
                    setattr(self, name, Parameter(empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(shapes)
                self._all_weights.append(list(shapes))
        self.reset_parameters()

    @property
    def num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch code (there it compacts weights for cuDNN)."""

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def _weights(self, layer: int, direction: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """(w_ih, w_hh, b_ih, b_hh) of one layer and direction."""
        names = self._all_weights[layer * self.num_directions + direction]
        w_ih, w_hh, b_ih, b_hh = [getattr(self, n) for n in names] + [None] * (4 - len(names))
        return w_ih, w_hh, b_ih, b_hh

    def _state_shape(self, batch: int) -> tuple[int, int, int]:
        return self.num_layers * self.num_directions, batch, self.hidden_size

    def _initial_state(self, input: Tensor, batch: int, hx: Any, batched: bool) -> State:
        """The initial states as a tuple of (num_layers * D, N, H) tensors (zeros when ``hx`` is None)."""
        n_states = 2 if self.mode == "LSTM" else 1
        shape = self._state_shape(batch)
        if hx is None:
            h0 = zeros(*shape, dtype=input.dtype, device=input.device)
            return (h0,) * n_states
        states = tuple(hx) if isinstance(hx, (tuple, list)) else (hx,)
        if len(states) != n_states or not all(isinstance(s, Tensor) for s in states):
            raise TypeError(f"{type(self).__name__}: hx must be " +
                            ("a tuple (h_0, c_0) of tensors" if n_states == 2 else "a tensor"))
        expected_dim = 3 if batched else 2
        for s in states:
            if s.dim() != expected_dim:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                names = "hx and cx" if n_states == 2 else "hx"
                raise RuntimeError(f"For {kind} input, {names} should also be {expected_dim}-D but got "
                                   f"{s.dim()}-D tensor")
        states = states if batched else tuple(s.unsqueeze(1) for s in states)
        for i, s in enumerate(states):
            _check_hidden("hidden" if n_states == 1 else f"hidden[{i}]", s, shape)
        return states

    def _check_input(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D tensor "
                             "instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        if input.dtype != self.weight_ih_l0.dtype:
            raise ValueError(f"input must have the type {self.weight_ih_l0.dtype}, got type {input.dtype}")

    def _run_direction(self, gi_steps: Sequence[Tensor], state: State, w_hh: Tensor, b_hh: Tensor | None,
                       reverse: bool) -> tuple[list[Tensor], State]:
        """The recurrence over time for one layer and direction: gi_steps[t] (N_t, G) -> outputs[t] (N_t, H).

        For packed input N_t = batch_sizes[t] shrinks over time: step t updates the first N_t rows of the
        state and keeps the rest, so each sequence's final state is that of its true last step (and, in
        reverse, a sequence starts from its initial state at its own last step)."""
        step = _STEPS[self.mode]
        outputs: list[Any] = [None] * len(gi_steps)
        for t in (reversed(range(len(gi_steps))) if reverse else range(len(gi_steps))):
            rows = gi_steps[t].shape[0]
            if rows == state[0].shape[0]:
                state = active = step(gi_steps[t], state, w_hh, b_hh)
            else:
                active = step(gi_steps[t], tuple(s[:rows] for s in state), w_hh, b_hh)
                state = tuple(cat([a, s[rows:]]) for a, s in zip(active, state))
            outputs[t] = active[0]
        return outputs, state

    def _run(self, input: Tensor, states: State, batch_sizes: list[int] | None = None) -> tuple[Tensor, State]:
        """All layers over time-major input (L, N, H_in), or packed data (sum N_t, H_in) with its
        ``batch_sizes``: the last layer's output (same layout) and final states."""
        finals: list[State] = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                index = layer * self.num_directions + direction
                if self.mode == "LSTM" and batch_sizes is None and lstm_applies(layer_input, w_ih, w_hh, states):
                    out_d, h_n, c_n = lstm_layer(layer_input, states[0][index], states[1][index], w_ih, w_hh,
                                                 b_ih, b_hh, direction == 1)
                    outputs.append(out_d)
                    finals.append((h_n, c_n))
                    continue
                gi = F.linear(layer_input, w_ih, b_ih)  # every time step in one matmul
                # unbind/split make one graph node per step, and each one's backward allocates a zero gradient
                # of all of gi (O(L^2 N G) in total); a single-node unbind in functional/ would make it linear.
                gi_steps = gi.unbind(0) if batch_sizes is None else gi.split(batch_sizes)
                out, final = self._run_direction(gi_steps, tuple(s[index] for s in states), w_hh, b_hh,
                                                 direction == 1)
                outputs.append(stack(out) if batch_sizes is None else cat(out))
                finals.append(final)
            layer_input = outputs[0] if len(outputs) == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, training=True)
        final_states = tuple(stack([f[k] for f in finals]) for k in range(len(states)))
        return layer_input, final_states

    def _forward_packed(self, input: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
        """PyTorch's packed path: hx in the caller's batch order is sorted like the data, and h_n (c_n)
        is put back in the caller's order."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        self._check_input(data)
        sizes = batch_sizes.tolist()
        states = self._initial_state(data, sizes[0], hx, True)
        if hx is not None and sorted_indices is not None:
            states = tuple(s.index_select(1, sorted_indices) for s in states)
        output, states = self._run(data, states, sizes)
        if unsorted_indices is not None:
            states = tuple(s.index_select(1, unsorted_indices) for s in states)
        return (PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices),
                states if self.mode == "LSTM" else states[0])

    def forward(self, input: Tensor | PackedSequence, hx: Any = None) -> tuple[Any, Any]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        self._check_input(input)
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        output, states = self._run(input, self._initial_state(input, input.shape[1], hx, batched))
        if not batched:
            output, states = output.squeeze(1), tuple(s.squeeze(1) for s in states)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, (states if self.mode == "LSTM" else states[0])

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + changed_options(self, {
            "num_layers": 1, "bias": True, "batch_first": False, "dropout": 0, "bidirectional": False})


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity='relu'``: relu).
    Returns (output (L, N, D * H), h_n (num_layers * D, N, H))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory; gates i, f, g, o in that order. ``forward(input, (h_0, c_0))`` returns
    (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; gates r, z, n in that order, with n = tanh(W_in x + b_in + r (W_hn h + b_hn))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)


# ------------------------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """One time step: input (N, H_in) or (H_in,), state (N, H) or (H,). Parameters weight_ih (G, H_in),
    weight_hh (G, H), bias_ih, bias_hh (G,), initialised U(-1/sqrt(H), 1/sqrt(H))."""

    _mode: str

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        gate_size = _GATES[self._mode] * hidden_size
        self.weight_ih = Parameter(empty(gate_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, device=device, dtype=dtype))
        optional_parameters(self, bias, ("bias_ih", "bias_hh"), gate_size, device=device, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def _step(self, input: Tensor, state: Sequence[Tensor | None]) -> State:
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        shape = tuple(input.shape[:-1]) + (self.hidden_size,)
        state = tuple(zeros(*shape, dtype=input.dtype, device=input.device) if s is None else s for s in state)
        for s in state:
            _check_hidden("hidden", s, shape)  # type: ignore[arg-type]
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return _STEPS[self._mode](gi, state, self.weight_hh, self.bias_hh)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + changed_options(self, {"bias": True,
                                                                                 "nonlinearity": "tanh"})


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: ``forward(input, (h, c))`` -> (h', c')."""
    _mode = "LSTM"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        h, c = self._step(input, (None, None) if hx is None else hx)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step: h' = (1 - z) n + z h."""
    _mode = "GRU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, (hx,))[0]
