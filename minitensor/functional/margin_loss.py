"""The margin and embedding losses of ``torch.nn.functional``: margin_ranking_loss, hinge_embedding_loss,
cosine_embedding_loss, soft_margin_loss, multilabel_soft_margin_loss, multi_margin_loss, multilabel_margin_loss,
triplet_margin_loss.

Each is composed of differentiable tensor ops, as PyTorch's composite versions are, so the broadcasting and
the gradients follow: ``clamp(min=0)`` where PyTorch clamps (its gradient passes at 0), ``relu`` where
PyTorch's kernel tests ``> 0`` (multi_margin_loss, multilabel_margin_loss), softplus for log(1 + exp(z))
(finite for any z).
``size_average`` / ``reduce`` are the deprecated spellings of ``reduction``, as in ``loss.py``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .. import dtypes as _dt
from ..creation import arange, as_tensor
from ..tensor import Tensor
from ._util import broadcast_error, out_of_range, torch_dtype_name
from .activation import logsigmoid, softplus
from .indexing import where
from .distance import pairwise_distance
from .loss import _reduce_tensor, _reduction
from .math import minimum
from ..amp.autocast_mode import cast_early
from ..amp.policy import MarginLoss

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]

_COSINE_EPS = 1e-12  # PyTorch's EPSILON added to each squared norm in cosine_embedding_loss


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target (input1 - input2) + margin): target 1 asks input1 to rank above input2 by ``margin``,
    -1 below. The three broadcast but must have the same number of dims."""
    reduction = _reduction(size_average, reduce, reduction)
    input1, input2, target = cast_early(MarginLoss, input1, input2, target)  # autocast: float32, as PyTorch's
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce_tensor((-target * (input1 - input2) + float(margin)).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1 (both terms for any other target value,
    as PyTorch); input and target broadcast."""
    reduction = _reduction(size_average, reduce, reduction)
    input, target = cast_early(MarginLoss, input, target)
    losses = where(target != 1, (float(margin) - input).clamp(min=0), 0.0) + where(target != -1, input, 0.0)
    return _reduce_tensor(losses, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1, 0 elsewhere; inputs
    (N, D) with target (N,), or (D,) with a 0-d target. cos = x.y / sqrt((|x|^2 + 1e-12)(|y|^2 + 1e-12))."""
    reduction = _reduction(size_average, reduce, reduction)
    input1, input2, target = cast_early(MarginLoss, input1, input2, target)
    t_dim = target.dim()
    if t_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != t_dim + 1 or input2.dim() != t_dim + 1:
        raise RuntimeError(f"{t_dim}D target tensor expects {t_dim + 1}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    squares = [(x * x).sum(t_dim) + _COSINE_EPS for x in (input1, input2)]
    cos = (input1 * input2).sum(t_dim) / (squares[0] * squares[1]).sqrt()
    losses = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - float(margin)).clamp(min=0), 0.0)
    return _reduce_tensor(losses, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target input)), as softplus (finite where PyTorch's exp overflows); target broadcasts to
    input's shape and is taken in input's dtype."""
    reduction = _reduction(size_average, reduce, reduction)
    input, target = cast_early(MarginLoss, input, target)
    if not input.is_floating_point():
        raise RuntimeError("result type Float can't be cast to the desired output type "
                           f"{torch_dtype_name(input.dtype)}")
    target = as_tensor(target, device=input.device)
    try:
        shape = np.broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise broadcast_error([input.shape, target.shape]) from None
    if shape != input.shape:
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    return _reduce_tensor(softplus(-target.to(input.dtype) * input), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Per sample, the mean over the classes (the last dim) of weight * -(t log sigmoid(x) +
    (1 - t) log sigmoid(-x)): one loss per sample, (N, C) -> (N,)."""
    reduction = _reduction(size_average, reduce, reduction)
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    class_dim = input.dim() - 1
    return _reduce_tensor(losses.sum(class_dim) / input.size(class_dim), reduction)


def _check_multi_margin(input: Tensor, target: Tensor, weight: Tensor | None) -> tuple[int, int]:
    """PyTorch's checks of multi_margin_loss's operands; -> (samples, classes)."""
    ndim = input.dim()
    if ndim > 2 or (ndim > 0 and input.shape[-1] == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    frames, classes = (input.shape[0], input.shape[1]) if ndim == 2 else (1, input.numel())
    if target.dim() > 1 or target.numel() != frames:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{frames}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
    if target.dtype != _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {torch_dtype_name(target.dtype)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"multi_margin_loss_cpu_kernel\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}'")
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {torch_dtype_name(input.dtype)} but found "
                           f"{torch_dtype_name(weight.dtype)}")
    if out_of_range(target.array, 0, classes) is not None:
        raise RuntimeError("target out of range")
    return frames, classes


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """Per sample: sum over the classes i != y of w[y] max(0, margin - x[y] + x[i])^p, divided by the number
    of classes (p = 1 or 2); input (N, C) or (C,), target (N,) class indices or one index."""
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    input, weight = cast_early(MarginLoss, input, weight)
    frames, classes = _check_multi_margin(input, target, weight)
    x, t = input.reshape(frames, classes), target.reshape(frames, 1)
    h = ((float(margin) - x.gather(1, t)) + x).relu()  # PyTorch's order of the sums; no gradient at 0
    if p == 2:
        h = h.square()
    if weight is not None:
        h = h * weight.gather(0, t.reshape(-1)).reshape(frames, 1)
    h = where(arange(classes, device=input.device) != t, h, 0.0)  # the target's own class takes no part
    losses = h.sum(1) / classes
    return _reduce_tensor(losses.reshape(()) if target.dim() == 0 else losses, reduction)


def _check_multilabel_margin(input: Tensor, target: Tensor) -> tuple[int, int]:
    """PyTorch's checks of multilabel_margin_loss's operands, in its order; -> (samples, classes)."""
    ndim = input.dim()
    if not ((ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    frames, classes = (input.shape[0], input.shape[1]) if ndim == 2 else (1, input.numel())
    fits = target.dim() <= 1 and target.numel() == classes if ndim <= 1 else \
        target.dim() == 2 and tuple(target.shape) == (frames, classes)
    if not fits:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if input.numel() and out_of_range(target.array, -1, classes) is not None:  # after a -1 too, as PyTorch
        raise RuntimeError("argument #2 'target' is out of range")
    if input.dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError("\"multilabel_margin_loss_forward_out_frame\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}'")
    if target.dtype != _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {torch_dtype_name(target.dtype)}")
    return frames, classes


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Per sample, sum over the labels j in the target and the classes i not in it of
    max(0, 1 - (x[j] - x[i])), divided by the number of classes C. input (N, C), (C,) or (); target of
    the same shape holds class indices, padded with -1: only those before the first -1 count (a label
    given twice counts twice, as in PyTorch). A 1-D or 0-d target gives a 0-d loss, even with 'none'."""
    reduction = _reduction(size_average, reduce, reduction)
    (input,) = cast_early(MarginLoss, input)  # autocast: float32, as PyTorch's
    target = as_tensor(target, device=input.device)
    frames, classes = _check_multilabel_margin(input, target)
    x, t = input.reshape(frames, classes), target.reshape(frames, classes)
    kept = (t < 0).cumsum(1) == 0  # (N, C): the labels before the first -1
    labels = where(kept, t, 0)
    is_label = ((labels.unsqueeze(2) == arange(classes, device=input.device)) & kept.unsqueeze(2)).any(1)
    # (N, labels j, classes i): (1 - x[j]) + x[i], PyTorch's order; relu: no gradient at 0 (its kernel's z > 0)
    h = ((1 - x.gather(1, labels)).unsqueeze(2) + x.unsqueeze(1)).relu()
    h = where(kept.unsqueeze(2) & ~is_label.unsqueeze(1), h, 0.0)
    losses = h.sum((1, 2)) / classes
    return _reduce_tensor(losses.reshape(()) if target.dim() <= 1 else losses, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with d = pairwise_distance(p, eps) over the last dim; ``swap``
    uses min(d(a, n), d(p, n)) for the negative distance (Balntas et al.)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_triplet(anchor, positive, negative, margin)
    anchor, positive, negative = cast_early(MarginLoss, anchor, positive, negative)
    return _triplet(anchor, positive, negative, lambda a, b: pairwise_distance(a, b, p, eps), margin, swap,
                    reduction)


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative "
                           f"{negative.dim()}D inputs")


def _triplet(anchor: Tensor, positive: Tensor, negative: Tensor, distance: Callable[[Tensor, Tensor], Tensor],
             margin: float, swap: bool, reduction: str) -> Tensor:
    """The reduced max(0, margin + d(a, p) - d(a, n)), d(a, n) replaced by min(d(a, n), d(p, n)) if ``swap``."""
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return _reduce_tensor((margin + d_pos - d_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) for any distance d (default ``pairwise_distance``: p=2, eps=1e-6);
    ``swap`` uses min(d(a, n), d(p, n)). The gradient is whatever d's ops give."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(anchor, positive, negative, margin)
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet(anchor, positive, negative, distance, margin, swap, reduction)
