"""The classification losses of the loss family: cross_entropy (class indices or class probabilities, class
weights, ``ignore_index``, label smoothing) and nll_loss, each one Function on the backend's fused pair, with
``loss.py``'s reductions."""
from __future__ import annotations

import math
from typing import Any


from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ..creation import as_tensor
from ..amp.autocast_mode import cast_early
from ..backends.base import Backend
from ._util import torch_dtype_name
from .loss import _reduce, _reduction, _unreduce, _float_input

__all__ = ["cross_entropy", "nll_loss"]


def _log_probs(node: Any, saved: Any, log_probs: Any, out_shape: tuple[int, ...]) -> Any:
    """For a double backward: the saved log-probabilities are log_softmax(logits, 1)'s output."""
    from ..autograd.higher_order import function_output
    from .activation import LogSoftmax
    return function_output(node, log_probs, 0, LogSoftmax, {"params": {"axis": 1}})


# ------------------------------------------------------------------------------ class-index losses
class _ClassIndexLoss(ArrayFunction):
    """Losses over classes on axis 1 with integer targets; 'mean' divides by the summed target weights."""

    @staticmethod
    def _divisor(B: Backend, target: Any, weight: Any, ignore_index: int, reduction: str, dtype: Any) -> Any:
        if reduction != "mean":
            return None
        return B.sum(B.class_target_weights(target, weight, ignore_index, dtype), None, False)


class CrossEntropy(_ClassIndexLoss):
    """Fused log_softmax + nll (+ label smoothing), saving the log-probabilities."""
    torch_name = "NllLossBackward0"  # PyTorch's grad_fn name
    derived_saves = {0: _log_probs, 3: None}  # the divisor: a constant of the targets

    @staticmethod
    def forward(ctx: Any, B: Backend, logits: Any, target: Any, weight: Any, *, ignore_index: int,
                label_smoothing: float, reduction: str) -> Any:
        losses, log_probs = B.softmax_cross_entropy(logits, target, weight, ignore_index, label_smoothing)
        divisor = ctx._divisor(B, target, weight, ignore_index, reduction, logits.dtype)
        ctx.save_for_backward(log_probs, target, weight, divisor)
        ctx.shape, ctx.reduction = losses.shape, reduction
        ctx.ignore_index, ctx.label_smoothing = ignore_index, label_smoothing
        return _reduce(B, losses, reduction, divisor)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        log_probs, target, weight, divisor = ctx.saved_arrays
        g = _unreduce(B, g, ctx.shape, ctx.reduction, divisor)
        gx = B.softmax_cross_entropy_backward(g, log_probs, target, weight, ctx.ignore_index,
                                              ctx.label_smoothing)
        return gx, None, None


class NLLLoss(_ClassIndexLoss):
    torch_name = "NllLossBackward0"  # PyTorch's grad_fn name
    derived_saves = {2: None}

    @staticmethod
    def forward(ctx: Any, B: Backend, log_probs: Any, target: Any, weight: Any, *, ignore_index: int,
                reduction: str) -> Any:
        losses = B.nll_loss(log_probs, target, weight, ignore_index)
        divisor = ctx._divisor(B, target, weight, ignore_index, reduction, log_probs.dtype)
        ctx.save_for_backward(target, weight, divisor)
        ctx.shape, ctx.reduction = losses.shape, reduction
        ctx.ignore_index, ctx.num_classes = ignore_index, log_probs.shape[1]
        return _reduce(B, losses, reduction, divisor)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        target, weight, divisor = ctx.saved_arrays
        g = _unreduce(B, g, ctx.shape, ctx.reduction, divisor)
        return B.nll_loss_backward(g, target, weight, ctx.ignore_index, ctx.num_classes), None, None


class CrossEntropyProbs(ArrayFunction):
    """Cross-entropy against class probabilities (N, C, *); 'mean' divides by the number of rows."""
    derived_saves = {0: _log_probs}

    @staticmethod
    def forward(ctx: Any, B: Backend, logits: Any, target: Any, weight: Any, *, label_smoothing: float,
                reduction: str) -> Any:
        losses, log_probs = B.softmax_cross_entropy_probs(logits, target, weight, label_smoothing)
        ctx.save_for_backward(log_probs, target, weight)
        ctx.shape, ctx.reduction, ctx.label_smoothing = losses.shape, reduction, label_smoothing
        return _reduce(B, losses, reduction)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        log_probs, target, weight = ctx.saved_arrays
        g = _unreduce(B, g, ctx.shape, ctx.reduction)
        gx, gt = B.softmax_cross_entropy_probs_backward(g, log_probs, target, weight, ctx.label_smoothing,
                                                        ctx.needs_input_grad[:2])
        return gx, gt, None


def _batched(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, bool]:
    """An unbatched input (C,) (with target () or (C,)) gets a batch dim of 1; the flag says so."""
    if input.ndim != 1:
        return input, target, False
    return input.unsqueeze(0), target.unsqueeze(0), True


def _check_class_targets(name: str, input: Tensor, target: Tensor, ignore_index: int) -> None:
    """Integer targets of shape (N, *) for input (N, C, *), each in [0, C) or equal to ignore_index; checked
    in PyTorch's order (the shape, then the dtype) with its error types."""
    t, shape, t_shape = target.array, input.array.shape, target.array.shape  # plain tuples (this runs per step)
    expected = shape[:1] + shape[2:]
    if len(shape) == 2 and len(t_shape) > 1:
        raise RuntimeError(f"{name}: 0D or 1D target tensor expected, multi-target not supported (target shape "
                           f"{t_shape}; probability targets must have the input's shape {shape})")
    if not t_shape or t_shape[0] != shape[0]:
        raise ValueError(f"{name}: expected target of shape {expected} for input of shape {shape}, got target "
                         f"of shape {t_shape}")
    if t_shape != expected:
        raise RuntimeError(f"{name}: Expected target size {list(expected)}, got {list(t_shape)}")
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: expected target dtype to be Long or Byte, but got "
                           f"{torch_dtype_name(target.dtype)} (class-index targets; probability targets must "
                           f"have the input's shape {shape})")
    n_classes = shape[1]
    if t.size and bool((t.min() >= 0) & (t.max() < n_classes)):  # the common case: one sync, two reductions
        return
    bad = (t < 0) | (t >= n_classes)
    bad &= t != ignore_index
    if bool(bad.any()):
        value = int(input.device.backend.to_numpy(t[bad][:1])[0])
        raise IndexError(f"{name}: target {value} is out of bounds for {n_classes} classes (valid: 0 to "
                         f"{n_classes - 1}, or ignore_index={ignore_index})")


def _class_input(name: str, input: Tensor, weight: Any) -> Tensor | None:
    """Checks the (N, C, *) input and returns the class weights as a (C,) tensor in its dtype."""
    _float_input(name, input)
    if input.ndim < 2:
        raise ValueError(f"{name}: expected input of shape (N, C, ...) or (C,), got {tuple(input.shape)}")
    if weight is None:
        return None
    weight = as_tensor(weight, device=input.device)
    if tuple(weight.shape) != (input.shape[1],):
        raise ValueError(f"{name}: weight must have one entry per class, shape ({input.shape[1]},), got "
                         f"{tuple(weight.shape)}")
    return weight if weight.array.dtype == input.array.dtype else weight.to(input.dtype)


def _unbatched_result(out: Tensor, unbatched: bool, reduction: str) -> Tensor:
    return out.squeeze(0) if unbatched and reduction == "none" else out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy of logits ``input`` (N, C, *) or (C,), fused and stable for any logits.

    ``target`` holds class indices (N, *) (int64; ``ignore_index`` rows count for nothing) or class
    probabilities of the input's shape. With eps = label_smoothing and w = weight (default 1), each row's
    loss is (1 - eps) w_t (-log p_t) + eps / C sum_c w_c (-log p_c); 'mean' divides the sum by the summed
    w_t of the rows not ignored (by the number of rows for probability targets), as PyTorch does."""
    name = "cross_entropy"
    input, target, weight = cast_early(CrossEntropy, input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{name}: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    target = as_tensor(target, device=input.device)
    probabilities = target.shape == input.shape
    input, target, unbatched = _batched(input, target)
    weight = _class_input(name, input, weight)
    if probabilities:
        if not target.is_floating_point():
            raise TypeError(f"{name}: a target of the input's shape {tuple(input.shape)} holds class "
                            f"probabilities and must be floating point, got {target.dtype}")
        if ignore_index >= 0:
            raise ValueError(f"{name}: ignore_index is not supported for probability targets")
        target = target if target.array.dtype == input.array.dtype else target.to(input.dtype)
        out = CrossEntropyProbs.apply(input, target, weight, label_smoothing=float(label_smoothing),
                                      reduction=reduction)
        if reduction == "mean" and input.shape[1] == 0:  # PyTorch divides by numel / C = 0 / 0
            out = out * math.nan
    else:
        _check_class_targets(name, input, target, ignore_index)
        out = CrossEntropy.apply(input, target, weight, ignore_index=int(ignore_index),
                                 label_smoothing=float(label_smoothing), reduction=reduction)
    return _unbatched_result(out, unbatched, reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities ``input`` (N, C, *) or (C,) at class indices ``target``
    (N, *): -w_t input[t] per row, 0 where target == ignore_index; 'mean' divides by the summed w_t."""
    name = "nll_loss"
    input, weight = cast_early(NLLLoss, input, weight)
    reduction = _reduction(size_average, reduce, reduction)
    input, target, unbatched = _batched(input, as_tensor(target, device=input.device))
    weight = _class_input(name, input, weight)
    _check_class_targets(name, input, target, ignore_index)
    out = NLLLoss.apply(input, target, weight, ignore_index=int(ignore_index), reduction=reduction)
    return _unbatched_result(out, unbatched, reduction)
