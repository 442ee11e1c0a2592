"""nn.utils.rnn (padding and packing) against NumPy references written step by step, gradients through
packing by gradcheck, and RNN/LSTM/GRU on PackedSequence input against running each sequence alone (and
against PyTorch, with copied weights, when it is installed)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
from minitensor import nn
from minitensor.nn.utils.rnn import (PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                     pad_sequence, unpack_sequence, unpad_sequence)
from minitensor.testing import gradcheck

lengths_st = st.lists(st.integers(1, 6), min_size=1, max_size=5)


def make_seqs(lengths, trailing=(2,), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n,) + trailing) for n in lengths]


def pad_ref(seqs, batch_first, value, side):
    T = max(len(s) for s in seqs)
    out = np.full((len(seqs), T) + seqs[0].shape[1:], value)
    for b, s in enumerate(seqs):
        if side == "right":
            out[b, :len(s)] = s
        else:
            out[b, T - len(s):] = s
    return out if batch_first else out.swapaxes(0, 1)


def pack_ref(seqs, enforce_sorted):
    """Time-major packing written as the definition: at step t, step t of every sequence still running."""
    order = list(range(len(seqs))) if enforce_sorted else sorted(range(len(seqs)), key=lambda b: -len(seqs[b]))
    rows, batch_sizes = [], []
    for t in range(max(len(s) for s in seqs)):
        active = [b for b in order if len(seqs[b]) > t]
        rows.extend(seqs[b][t] for b in active)
        batch_sizes.append(len(active))
    return np.stack(rows), np.array(batch_sizes), order


# ----------------------------------------------------------------------------------------- padding
@settings(max_examples=25, deadline=None)
@given(lengths=lengths_st, batch_first=st.booleans(), side=st.sampled_from(["left", "right"]))
def test_pad_sequence_matches_reference(lengths, batch_first, side):
    seqs = make_seqs(lengths)
    out = pad_sequence([mt.tensor(s) for s in seqs], batch_first=batch_first, padding_value=-2.5,
                       padding_side=side)
    np.testing.assert_array_equal(out.numpy(), pad_ref(seqs, batch_first, -2.5, side))
    assert out.dtype == mt.float64


def test_pad_sequence_keeps_first_dtype_and_trailing_dims():
    out = pad_sequence([mt.ones(2, 3, dtype=mt.int64), mt.ones(1, 3)])
    assert out.dtype == mt.int64 and tuple(out.shape) == (2, 2, 3)
    assert pad_sequence(mt.ones(2, 3)).shape == (3, 2)  # a tensor is an iterable of its rows


@pytest.mark.parametrize("call, match", [
    (lambda: pad_sequence([]), "empty list of sequences"),
    (lambda: pad_sequence(3), "Expected iterable"),
    (lambda: pad_sequence([mt.ones(2, 3), mt.ones(2, 4)]), r"size of tensor a \(3\) must match"),
    (lambda: pad_sequence([mt.ones(2)], padding_side="mid"), "one of left or right"),
])
def test_pad_sequence_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()


# ----------------------------------------------------------------------------------------- packing
@settings(max_examples=25, deadline=None)
@given(lengths=lengths_st, batch_first=st.booleans())
def test_pack_padded_matches_reference_and_round_trips(lengths, batch_first):
    seqs = make_seqs(lengths)
    padded = mt.tensor(pad_ref(seqs, batch_first, 0.0, "right"))
    packed = pack_padded_sequence(padded, lengths, batch_first=batch_first, enforce_sorted=False)
    data, batch_sizes, order = pack_ref(seqs, enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.numpy(), data)
    assert packed.batch_sizes.dtype == mt.int64 and packed.batch_sizes.tolist() == batch_sizes.tolist()
    assert packed.sorted_indices.tolist() == order
    assert packed.unsorted_indices.tolist() == np.argsort(order).tolist()
    back, lens = pad_packed_sequence(packed, batch_first=batch_first, padding_value=7.0, total_length=8)
    ref = pad_ref(seqs, True, 7.0, "right")
    ref = np.pad(ref, ((0, 0), (0, 8 - ref.shape[1]), (0, 0)), constant_values=7.0)
    np.testing.assert_array_equal(back.numpy(), ref if batch_first else ref.swapaxes(0, 1))
    assert lens.dtype == mt.int64 and lens.tolist() == lengths
    for ours, ref in zip(unpack_sequence(packed), seqs):
        np.testing.assert_array_equal(ours.numpy(), ref)
    for ours, ref in zip(unpad_sequence(padded, mt.tensor(lengths), batch_first=batch_first), seqs):
        np.testing.assert_array_equal(ours.numpy(), ref)


def test_pack_sequence_sorted_has_no_indices():
    seqs = make_seqs([3, 2, 2])
    packed = pack_sequence([mt.tensor(s) for s in seqs])
    assert isinstance(packed, PackedSequence) and isinstance(packed, tuple)
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    np.testing.assert_array_equal(packed.data.numpy(), pack_ref(seqs, True)[0])
    data, batch_sizes, sorted_indices, unsorted_indices = packed  # unpacks like PyTorch's namedtuple
    assert batch_sizes.tolist() == [3, 3, 1]
    assert packed.double().data.dtype == mt.float64 and packed.float().data.dtype == mt.float32


def test_gradients_flow_through_packing():
    seqs = [mt.tensor(s, requires_grad=True) for s in make_seqs([2, 4, 1])]

    def f(*xs):
        packed = pack_sequence(xs, enforce_sorted=False)
        padded, _ = pad_packed_sequence(packed, batch_first=True, padding_value=3.0)
        return (padded * mt.arange(padded.numel(), dtype=mt.float64).reshape(padded.shape)).sum()

    assert gradcheck(f, seqs)
    padded = mt.tensor(pad_ref(make_seqs([3, 1]), False, 0.0, "right"), requires_grad=True)
    assert gradcheck(lambda p: mt.cat(unpad_sequence(p, mt.tensor([3, 1]))).pow(2).sum(), [padded])


@pytest.mark.parametrize("call, exc, match", [
    (lambda: pack_padded_sequence(mt.ones(3, 2), [1, 3]), RuntimeError, "sorted in decreasing order"),
    (lambda: pack_padded_sequence(mt.ones(3, 2), [3, 0]), RuntimeError, "greater than 0"),
    (lambda: pack_padded_sequence(mt.ones(3, 2), [3]), RuntimeError, r"len\(lengths\)` to be equal"),
    (lambda: pack_padded_sequence(mt.ones(3, 2), mt.tensor([[3, 1]])), RuntimeError, "1D CPU int64"),
    (lambda: pack_padded_sequence(mt.ones(0, 2), [1, 1]), RuntimeError, "Cannot pack empty"),
    (lambda: pack_padded_sequence(mt.ones(3, 2), [4, 1]), RuntimeError, "longer than"),
    (lambda: pad_packed_sequence(pack_sequence([mt.ones(3)]), total_length=2), ValueError, "total_length=2"),
])
def test_packing_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------------------- RNNs on packed input
def copy_weights(ours, theirs_params):
    for name, value in theirs_params:
        getattr(ours, name).data.copy_(mt.tensor(value))


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_rnn_equals_each_sequence_alone(mode, bidirectional):
    """The packed batch gives, for each sequence, exactly what the module gives on that sequence alone."""
    module = getattr(nn, mode)(2, 3, num_layers=2, bidirectional=bidirectional).double()
    lengths = [2, 5, 1, 3]
    seqs = make_seqs(lengths, seed=1)
    D = 2 if bidirectional else 1
    h0 = np.random.default_rng(2).standard_normal((2 * D, len(seqs), 3))
    hx = (mt.tensor(h0), mt.tensor(h0 * 0.5)) if mode == "LSTM" else mt.tensor(h0)
    out, hn = module(pack_sequence([mt.tensor(s) for s in seqs], enforce_sorted=False), hx)
    assert isinstance(out, PackedSequence)
    for b, (ours, s) in enumerate(zip(unpack_sequence(out), seqs)):
        hx_b = (mt.tensor(h0[:, b]), mt.tensor(h0[:, b] * 0.5)) if mode == "LSTM" else mt.tensor(h0[:, b])
        alone, hn_alone = module(mt.tensor(s), hx_b)
        np.testing.assert_allclose(ours.detach().numpy(), alone.detach().numpy(), rtol=1e-12, atol=1e-12)
        for state, state_alone in zip(hn if mode == "LSTM" else (hn,), hn_alone if mode == "LSTM" else (hn_alone,)):
            np.testing.assert_allclose(state[:, b].detach().numpy(), state_alone.detach().numpy(), atol=1e-12)


def test_packed_rnn_gradcheck_and_errors():
    module = nn.GRU(2, 2, bidirectional=True).double()
    seqs = [mt.tensor(s, requires_grad=True) for s in make_seqs([1, 3], seed=3)]

    def f(*xs):
        out, hn = module(pack_sequence(xs, enforce_sorted=False))
        return out.data.sum() + hn.pow(2).sum()

    assert gradcheck(f, seqs)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, 2, 2\)"):
        module(pack_sequence(seqs, enforce_sorted=False), mt.zeros(2, 3, 2, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 3"):
        module(PackedSequence(mt.zeros(3, 1, 2, dtype=mt.float64), mt.tensor([2, 1])))


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_rnn_against_torch(mode, bidirectional):
    torch = pytest.importorskip("torch")
    from torch.nn.utils import rnn as trnn
    theirs = getattr(torch.nn, mode)(3, 4, num_layers=2, bidirectional=bidirectional, batch_first=True)
    ours = getattr(nn, mode)(3, 4, num_layers=2, bidirectional=bidirectional, batch_first=True)
    copy_weights(ours, [(n, p.detach().numpy()) for n, p in theirs.named_parameters()])
    lengths = [2, 5, 3, 1, 5]
    seqs = [s.astype(np.float32) for s in make_seqs(lengths, (3,), seed=4)]
    rng = np.random.default_rng(5)
    D = 2 if bidirectional else 1
    h0 = rng.standard_normal((2 * D, len(seqs), 4)).astype(np.float32)
    t_x = torch.tensor(pad_ref(seqs, True, 0.0, "right").astype(np.float32), requires_grad=True)
    m_x = mt.tensor(t_x.detach().numpy(), requires_grad=True)
    t_hx, m_hx = torch.tensor(h0), mt.tensor(h0)
    if mode == "LSTM":
        t_hx, m_hx = (t_hx, t_hx * 2), (m_hx, m_hx * 2)
    t_out, t_hn = theirs(trnn.pack_padded_sequence(t_x, lengths, batch_first=True, enforce_sorted=False), t_hx)
    m_out, m_hn = ours(pack_padded_sequence(m_x, lengths, batch_first=True, enforce_sorted=False), m_hx)
    for a, b in zip(m_out, t_out):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    t_states, m_states = (t_hn, m_hn) if mode == "LSTM" else ((t_hn,), (m_hn,))
    for a, b in zip(m_states, t_states):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    weights = rng.standard_normal(tuple(t_out.data.shape)).astype(np.float32)
    t_padded, _ = trnn.pad_packed_sequence(t_out, batch_first=True)
    m_padded, _ = pad_packed_sequence(m_out, batch_first=True)
    ((t_out.data * torch.tensor(weights)).sum() + t_padded.pow(2).sum() + sum(s.sum() for s in t_states)).backward()
    ((m_out.data * mt.tensor(weights)).sum() + m_padded.pow(2).sum() + sum(s.sum() for s in m_states)).backward()
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(getattr(ours, name).grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    np.testing.assert_allclose(m_x.grad.numpy(), t_x.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_packed_sequence_constructor_forms():
    data, batch_sizes = mt.arange(3.0), mt.tensor([2, 1])
    packed = PackedSequence(data, batch_sizes, mt.tensor([1, 0]))
    assert packed.unsorted_indices.tolist() == [1, 0]  # derived from sorted_indices, as PyTorch's
    from_pair = PackedSequence((data, batch_sizes))
    assert from_pair.batch_sizes is batch_sizes and from_pair.sorted_indices is None
    assert [p.shape for p in unpack_sequence(packed)] == [(1,), (2,)]
