"""``nn.utils.rnn``: padding and packing variable-length sequences, with PyTorch's names and layouts.

A batch of B sequences of lengths l_b (sorted so that l_0 >= l_1 >= ...) is packed time-major:
``data`` (sum l_b, *) holds step 0 of every sequence, then step 1 of those longer than 1, and so on;
``batch_sizes[t]`` = #{b : l_b > t}, so at step t the active sequences are the first batch_sizes[t] rows.
``sorted_indices`` maps that sorted order to the caller's batch order (``unsorted_indices`` back).

Every conversion is one row gather (``index_select``, whose backward is a scatter-add), so gradients flow
through packing; the gather indices are computed on the host from the lengths (CPU int64, as in PyTorch).
Padding positions gather from one extra row that holds ``padding_value``.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple, Sequence

import numpy as np

from ... import dtypes as _dt
from ...creation import as_tensor, full
from ...functional import cat
from ...tensor import Tensor


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """(data (sum of lengths, *), batch_sizes (max length,) int64 on the CPU, sorted_indices,
    unsorted_indices (B,) or None when the batch was given sorted). As PyTorch's, it may be made as
    ``PackedSequence(data, batch_sizes[, sorted_indices])`` (``unsorted_indices`` then derived) or from a
    pair ``PackedSequence((data, batch_sizes))``."""

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if batch_sizes is None:
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn.")
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = sorted_indices.argsort()  # the inverse permutation
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the indices follow data's device, ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return self._replace(data=data, **{name: getattr(self, name).to(data.device) for name in
                                           ("sorted_indices", "unsorted_indices") if getattr(self, name) is not None})

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> PackedSequence:
        return self.to("cuda" if device is None else device)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dt.float32)

    def double(self) -> PackedSequence:
        return self.to(dtype=_dt.float64)

    def half(self) -> PackedSequence:
        return self.to(dtype=_dt.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda


def _host_lengths(lengths: Any) -> np.ndarray:
    """``lengths`` (a list or a 1-D CPU integer tensor) as a NumPy int64 vector."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device} {lengths.dtype} tensor")
        return np.asarray(lengths.tolist(), dtype=np.int64)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _gather_rows(data: Tensor, rows: np.ndarray, padding_value: float | None = None) -> Tensor:
    """data[rows] along dim 0, shaped rows.shape + data.shape[1:]; with ``padding_value``, row index
    len(data) reads a row of that value."""
    if padding_value is not None:
        data = cat([data, full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)])
    index = as_tensor(np.ascontiguousarray(rows.reshape(-1)), dtype=_dt.int64, device=data.device)
    return data.index_select(0, index).reshape(rows.shape + tuple(data.shape[1:]))


def _indices(order: np.ndarray, device: Any) -> Tensor:
    return as_tensor(order, dtype=_dt.int64, device=device)


def pad_sequence(sequences: Iterable[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """B tensors (l_b, *) -> (T, B, *) (``batch_first``: (B, T, *)) with T = max l_b, each sequence at the
    start (``padding_side='right'``) or the end ('left') of its column, the rest ``padding_value``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    seqs = tuple(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if any(s.dim() == 0 for s in seqs):
        raise RuntimeError("pad_sequence: every sequence needs a first (time) dimension, got a 0-d tensor")
    trailing = tuple(seqs[0].shape[1:])
    for s in seqs[1:]:
        for dim, (a, b) in enumerate(zip(trailing, tuple(s.shape[1:])), start=1):
            if a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                   f"non-singleton dimension {dim}")
    lengths = np.array([s.shape[0] for s in seqs], dtype=np.int64)
    data = cat([s.to(seqs[0].dtype) for s in seqs])  # the result has the first sequence's dtype, as PyTorch's
    steps = np.arange(lengths.max(initial=0))[None, :]
    mask = steps < lengths[:, None] if padding_side == "right" else steps >= steps.shape[1] - lengths[:, None]
    rows = np.full(mask.shape, data.shape[0], dtype=np.int64)
    rows[mask] = np.arange(data.shape[0])  # mask's row-major order is the concatenation order
    return _gather_rows(data, rows if batch_first else rows.T, padding_value)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Padded (T, B, *) (or (B, T, *)) with B lengths -> PackedSequence. With ``enforce_sorted=False`` the
    batch is sorted by decreasing length first (``sorted_indices``); otherwise it must already be."""
    lens = _host_lengths(lengths)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch, steps = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    order = np.argsort(-lens, kind="stable") if not enforce_sorted else np.arange(batch)
    lens = lens[order]
    if enforce_sorted and np.any(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if lens[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {lens[0]} is longer than the padded input's "
                           f"{steps} time steps")
    active = np.arange(lens[0])[:, None] < lens[None, :]  # (max length, B): step t of sorted sequence b
    t, b = np.nonzero(active)  # time-major: the packed order
    rows = order[b] * steps + t if batch_first else t * batch + order[b]
    data = _gather_rows(input.flatten(0, 1), rows)
    batch_sizes = as_tensor(active.sum(1), dtype=_dt.int64, device="cpu")  # on the CPU, as PyTorch's (any default)
    if enforce_sorted:
        return PackedSequence(data, batch_sizes)
    return PackedSequence(data, batch_sizes, _indices(order, input.device), _indices(np.argsort(order), input.device))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: (padded (T, B, *) or (B, T, *), lengths (B,) int64 on the CPU),
    in the caller's batch order; T = ``total_length`` or the longest length."""
    batch_sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    data = sequence.data
    active = np.arange(batch_sizes[0])[None, :] < batch_sizes[:, None]  # (L, B) in sorted batch order
    rows = np.full((steps, batch_sizes[0]), data.shape[0], dtype=np.int64)
    rows[:len(batch_sizes)][active] = np.arange(data.shape[0])
    lengths = active.sum(0)
    if sequence.unsorted_indices is not None:
        unsorted = np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)
        rows, lengths = rows[:, unsorted], lengths[unsorted]
    padded = _gather_rows(data, rows.T if batch_first else rows, padding_value)
    return padded, as_tensor(lengths, dtype=_dt.int64, device="cpu")


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """B tensors (l_b, *) -> PackedSequence (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """Padded (T, B, *) (or (B, T, *)) -> the list of B tensors (l_b, *): one gather, then ``split``."""
    lens = _host_lengths(lengths)
    batch, steps = padded_sequences.shape[:2] if batch_first else padded_sequences.shape[1::-1]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    b, t = np.nonzero(np.arange(steps)[None, :] < lens[:, None])  # batch-major: the output order
    rows = b * steps + t if batch_first else t * batch + b
    return list(_gather_rows(padded_sequences.flatten(0, 1), rows).split(lens.tolist()))


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """PackedSequence -> the list of its B sequences (l_b, *), in the caller's batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (``out[permutation[i]] = i``); None stays None (PackedSequence's unsorted
    indices)."""
    if permutation is None:
        return None
    from ...creation import arange, empty_like
    out = empty_like(permutation)
    return out.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]
