"""Embedding: rows of a weight table looked up by integer indices; embedding_bag: bags of them reduced."""
from __future__ import annotations

from typing import Any

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ..creation import arange, as_tensor, full, zeros
from ..dtypes import int64
from ..backends.base import Backend
from .shape import cat

__all__ = ["embedding"]
__all__ += ["one_hot"]


class Embedding(ArrayFunction):
    """y = weight[indices]; the gradient scatter-adds gy rows back (repeated indices accumulate), or with
    ``sparse`` is the sparse COO list of those rows (what SparseAdam steps on without a dense table)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, indices: Any, weight: Any, *, padding_idx: int | None,
                scale_grad_by_freq: bool, sparse: bool = False) -> Any:
        ctx.save_for_backward(indices)
        ctx.num_embeddings, ctx.padding_idx = weight.shape[0], padding_idx
        ctx.scale_grad_by_freq, ctx.sparse = scale_grad_by_freq, sparse
        return B.embedding(weight, indices)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        indices, = ctx.saved_arrays
        if not ctx.needs_input_grad[1]:
            return None, None
        if ctx.sparse:
            if ctx.scale_grad_by_freq:  # PyTorch's check, at backward as there
                raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
            return None, B.embedding_sparse_backward(gy, indices, ctx.num_embeddings, ctx.padding_idx)
        return None, B.embedding_backward(gy, indices, ctx.num_embeddings, ctx.padding_idx,
                                          ctx.scale_grad_by_freq)


def _padding_index(padding_idx: int | None, num_embeddings: int) -> int | None:
    """padding_idx in [0, num_embeddings) (negative counts from the end), as PyTorch."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"embedding: padding_idx {padding_idx} must be within the {num_embeddings} rows "
                         f"of weight (-{num_embeddings} to {num_embeddings - 1})")
    return padding_idx % num_embeddings


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``weight[input]``: integer indices of any shape give input.shape + (embedding_dim,) rows of
    ``weight`` (num_embeddings, embedding_dim). The ``padding_idx`` row gets no gradient;
    ``scale_grad_by_freq`` divides each row's gradient by its index's count in ``input``; ``sparse``: weight's
    gradient is sparse COO (one entry per lookup)."""
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                         f"{tuple(weight.shape)}")
    input = as_tensor(input, device=weight.device)
    if input.array.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.dtype} instead (embedding)")
    num_embeddings = weight.shape[0]
    idx = input.array
    bad = (idx < 0) | (idx >= num_embeddings)
    if bool(bad.any()):
        value = int(weight.device.backend.to_numpy(idx[bad][:1])[0])
        raise IndexError(f"embedding: index {value} is out of range for a weight of {num_embeddings} rows "
                         f"(valid: 0 to {num_embeddings - 1})")
    return Embedding.apply(input, weight, padding_idx=_padding_index(padding_idx, num_embeddings),
                           scale_grad_by_freq=bool(scale_grad_by_freq), sparse=bool(sparse))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 (*, num_classes) with a 1 at each index of ``tensor`` (int64 class indices); num_classes=-1
    takes max + 1. Checking the values reads them on the host, as PyTorch does."""
    if not isinstance(tensor, Tensor) or tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if tensor.min().item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max().item()) + 1
        elif tensor.max().item() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).long()


__all__ += ["embedding_bag"]
_BAG_MODES = ("sum", "mean", "max")


class EmbeddingBag(ArrayFunction):
    """Bags of weight's rows reduced (``B.embedding_bag_forward``); the gradient w.r.t. weight
    (``B.embedding_bag_backward``: "max" to each (bag, d)'s arg-max row) and, in mode "sum", w.r.t.
    per_sample_weights (``B.embedding_bag_per_sample_weights_backward``: gy's bag row . the entry's row)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, weight: Any, per_sample_weights: Any, indices: Any, offsets: Any, *,
                mode: str, padding_idx: int | None, scale_grad_by_freq: bool) -> Any:
        out, max_rows = B.embedding_bag_forward(weight, indices, offsets, mode, per_sample_weights, padding_idx)
        # weight only for the per_sample_weights' gradient (an optimizer step may write it in place before)
        ctx.save_for_backward(indices, offsets, per_sample_weights, max_rows,
                              weight if ctx.needs_input_grad[1] else None)
        ctx.num_embeddings, ctx.mode, ctx.padding_idx = weight.shape[0], mode, padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        return out

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        indices, offsets, per_sample_weights, max_rows, weight = ctx.saved_arrays
        gw = gp = None
        if ctx.needs_input_grad[0]:
            gw = B.embedding_bag_backward(gy, indices, offsets, ctx.num_embeddings, ctx.mode, per_sample_weights,
                                          ctx.padding_idx, ctx.scale_grad_by_freq, max_rows)
        if ctx.needs_input_grad[1]:
            gp = B.embedding_bag_per_sample_weights_backward(gy, weight, indices, offsets, ctx.padding_idx)
        return gw, gp, None, None


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Tensor:
    """(B, D): each bag's rows of ``weight`` (num_embeddings, D) summed, averaged or maxed (``mode``).

    Bags: a 2-D ``input`` (B, L) has one bag per row; a 1-D ``input`` (N,) is cut at ``offsets`` (B,),
    the last bag running to N, or (B + 1,) with ``include_last_offset`` (PyTorch's kernels do not read that
    last offset either: the last bag still runs to N).
    ``per_sample_weights`` (input's shape, weight's dtype, mode "sum" only) scales each row first.
    ``padding_idx`` entries are left out (nor counted in a mean) and that row gets no gradient; an empty bag
    gives zeros. "max"'s gradient goes to one row per (bag, d), PyTorch's: the first of those tied at the
    maximum. One op on the backend's bag bounds (B + 1,): a Numba loop over the bags on the CPU, no (N, D)
    intermediate.
    """
    if max_norm is not None or sparse:
        raise NotImplementedError("embedding_bag: max_norm and sparse=True are not supported")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    input = as_tensor(input, device=weight.device)
    if input.array.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.dtype} instead (while checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(input.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({tuple(input.shape)})")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  f"on GitHub.")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as tensor for argument "
                           f"#1 'per_sample_weights'; but type {weight.dtype} does not equal "
                           f"{per_sample_weights.dtype} (while checking arguments for embedding_bag)")
    num_embeddings = weight.shape[0]
    if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num_embeddings} through "
                           f"{num_embeddings - 1}, but got {padding_idx}")
    bounds = _bag_bounds(input, offsets, include_last_offset)
    flat = input.reshape(-1).long()
    idx = flat.array
    if idx.size and bool(((idx < 0) | (idx >= num_embeddings)).any()):
        bad = idx[(idx < 0) | (idx >= num_embeddings)][:1]
        raise IndexError(f"embedding_bag: index {int(weight.device.backend.to_numpy(bad)[0])} is out of range "
                         f"for a weight of {num_embeddings} rows (valid: 0 to {num_embeddings - 1})")
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    return EmbeddingBag.apply(weight, psw, flat, bounds, mode=mode,
                              padding_idx=None if padding_idx is None else padding_idx % num_embeddings,
                              scale_grad_by_freq=bool(scale_grad_by_freq))


def _bag_bounds(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> Tensor:
    """The (B + 1,) int64 bounds of the bags in the flattened input: bag b is [bounds[b], bounds[b + 1]);
    the last bag runs to N (with no bag, bounds is [0]: every entry is in none)."""
    device = input.device
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        return arange(bags + 1, device=device) * length
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    offsets = as_tensor(offsets, device=device)
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if offsets.array.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #2 'offsets' to have one of the following scalar types: "
                           f"Long, Int; but got {offsets.dtype} instead (while checking arguments for embedding_bag)")
    n = input.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if offsets.shape[0]:
        ends = offsets.array[[0, -1]]
        first, last = (int(v) for v in device.backend.to_numpy(ends))  # one small read, as PyTorch checks them
        if first != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {first}")
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                               f"{last}")
        if bool((offsets[1:] < offsets[:-1]).any()):
            raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    if bags <= 0:
        return zeros(1, dtype=int64, device=device)
    # the last offset ends nothing: the last bag runs to N, as PyTorch
    return cat([offsets[:bags].long(), full((1,), n, dtype=int64, device=device)])
