"""Embedding: rows of a weight table looked up by integer indices."""
from __future__ import annotations

from typing import Any

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ..creation import arange, as_tensor
from ..dtypes import int64
from ..backends.base import Backend

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
        indices, = ctx.saved_tensors
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
        raise TypeError(f"embedding: indices must be integers (int64 or int32), got {input.dtype}")
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
