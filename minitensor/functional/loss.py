"""Losses: each one Function (one graph node) on a fused backend pair, with PyTorch's reductions.

A loss Function computes the unreduced loss on the backend, reduces it ('mean' | 'sum' | 'none'), and in
backward turns the reduced gradient back into one per element before the backend's fused backward.
``size_average`` and ``reduce`` are PyTorch's deprecated spellings of ``reduction``, accepted as there.
The losses over class indices or class probabilities (cross_entropy, nll_loss) are in ``class_loss.py``.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ..creation import as_tensor
from ._util import named, promote
from ..amp.autocast_mode import cast_early
from ..backends.base import Backend

__all__ = ["mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"]
__all__ += ["smooth_l1_loss", "huber_loss"]

_REDUCTIONS = ("mean", "sum", "none")


# ---------------------------------------------------------------------------------------- reductions
def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction, from PyTorch's legacy flags when either is given (they override ``reduction``, with
    PyTorch's deprecation warning)."""
    if size_average is not None or reduce is not None:
        legacy = "none" if reduce is False else "sum" if size_average is False else "mean"
        # PyTorch's functional losses warn as its loss modules do (old scripts pass size_average=False)
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{legacy}' "
                      "instead.", UserWarning, stacklevel=3)
        return legacy
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction!r} is not a valid value for reduction; expected one of {_REDUCTIONS}")
    return reduction


def _reduce(B: Backend, losses: Any, reduction: str, divisor: Any = None) -> Any:
    """sum, mean (sum / divisor; divisor defaults to the element count) or the losses themselves."""
    if reduction == "none":
        return losses
    total = B.sum(losses, None, False)
    if reduction == "sum":
        return total
    # every target ignored: 0/0 = nan, as PyTorch (silently: forwards run under apply's IEEE "ignore" state)
    return total / (losses.size if divisor is None else divisor)


def _unreduce(B: Backend, g: Any, shape: tuple[int, ...], reduction: str, divisor: Any = None) -> Any:
    """The gradient of each unreduced loss from that of the reduced one (a broadcast view: read only).

    A zero ``divisor`` (every target ignored: the 'mean' loss is 0/0 = nan) divides by 1 instead: the rows'
    weights are all 0, so the gradient is 0 as PyTorch's (not 0 * inf = nan), with no host sync."""
    if reduction == "none":
        return g
    if reduction == "mean":
        g = g / (math.prod(shape) if divisor is None else B.where(divisor == 0, 1, divisor))
    return B.broadcast_to(g, shape)


def _reduce_tensor(losses: Tensor, reduction: str) -> Tensor:
    """The mean, sum or the losses themselves: the reduction of the losses composed of tensor ops."""
    return losses.mean() if reduction == "mean" else losses.sum() if reduction == "sum" else losses


# ------------------------------------------------------------------------------- elementwise losses
class _DifferenceLoss(ArrayFunction):
    """loss = reduce(loss(B, x, t, **params)) for losses of x - t (x and t broadcast); d/dt = -d/dx."""
    loss: Callable[..., Any]  # the backend's loss and its backward, as static methods
    loss_backward: Callable[..., Any]

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, t: Any, *, reduction: str, **params: Any) -> Any:
        losses = ctx.loss(B, x, t, **params)
        ctx.save_for_backward(x, t)
        ctx.shape, ctx.reduction, ctx.params = losses.shape, reduction, params
        return _reduce(B, losses, reduction)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        x, t = ctx.saved_arrays
        gx = ctx.loss_backward(B, _unreduce(B, g, ctx.shape, ctx.reduction), x, t, **ctx.params)
        return (gx if ctx.needs_input_grad[0] else None), (-gx if ctx.needs_input_grad[1] else None)


class MSELoss(_DifferenceLoss):
    torch_name = "MseLossBackward0"  # PyTorch's grad_fn name
    loss = staticmethod(lambda B, x, t: B.mse_loss(x, t))
    loss_backward = staticmethod(lambda B, g, x, t: B.mse_loss_backward(g, x, t))


class L1Loss(_DifferenceLoss):
    loss = staticmethod(lambda B, x, t: B.l1_loss(x, t))
    loss_backward = staticmethod(lambda B, g, x, t: B.l1_loss_backward(g, x, t))


class SmoothL1Loss(_DifferenceLoss):
    loss = staticmethod(lambda B, x, t, beta: B.smooth_l1_loss(x, t, beta))
    loss_backward = staticmethod(lambda B, g, x, t, beta: B.smooth_l1_loss_backward(g, x, t, beta))


class HuberLoss(_DifferenceLoss):
    loss = staticmethod(lambda B, x, t, delta: B.huber_loss(x, t, delta))
    loss_backward = staticmethod(lambda B, g, x, t, delta: B.huber_loss_backward(g, x, t, delta))


class _BinaryLoss(ArrayFunction):
    """loss = reduce(weight * loss(B, x, t, pos_weight)); weight and pos_weight get no gradient."""
    loss: Callable[..., Any]  # the backend's loss and its backward, as static methods
    loss_backward: Callable[..., Any]

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, t: Any, weight: Any, pos_weight: Any, *, reduction: str) -> Any:
        losses = ctx.loss(B, x, t, pos_weight)
        if weight is not None:
            losses *= weight
        ctx.save_for_backward(x, t, weight, pos_weight)
        ctx.reduction = reduction
        return _reduce(B, losses, reduction)

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        x, t, weight, pos_weight = ctx.saved_arrays
        g = _unreduce(B, g, x.shape, ctx.reduction)
        if weight is not None:
            g = g * weight
        gx, gt = ctx.loss_backward(B, g, x, t, pos_weight, ctx.needs_input_grad[:2])
        return gx, gt, None, None


class BinaryCrossEntropy(_BinaryLoss):
    loss = staticmethod(lambda B, x, t, pos_weight: B.binary_cross_entropy(x, t))
    loss_backward = staticmethod(lambda B, g, x, t, pos_weight, needs: B.binary_cross_entropy_backward(
        g, x, t, needs=needs))


class BinaryCrossEntropyWithLogits(_BinaryLoss):
    loss = staticmethod(lambda B, x, t, pos_weight: B.bce_with_logits(x, t, pos_weight))
    loss_backward = staticmethod(lambda B, g, x, t, pos_weight, needs: B.bce_with_logits_backward(
        g, x, t, pos_weight, needs=needs))


def _broadcast_pair(name: str, input: Tensor, target: Any) -> tuple[Tensor, Tensor]:
    """input and target promoted to one float dtype; a shape mismatch warns (it broadcasts) as PyTorch."""
    input, target = promote(input, as_tensor(target, device=input.device), floating=True)
    if input.shape != target.shape:  # PyTorch warns first, then its broadcast fails (a RuntimeError)
        warnings.warn(f"{name}: using a target size ({tuple(target.shape)}) that is different to the input "
                      f"size ({tuple(input.shape)}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=3)
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:
            raise RuntimeError(f"{name}: target shape {tuple(target.shape)} does not broadcast with input "
                               f"shape {tuple(input.shape)}") from None
    return input, target


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean") -> Tensor:
    """Mean (or sum, or each) of (input - target)^2."""
    input, target = _broadcast_pair("mse_loss", *cast_early(MSELoss, input, target))
    return MSELoss.apply(input, target, reduction=_reduction(size_average, reduce, reduction))


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean") -> Tensor:
    """Mean (or sum, or each) of |input - target|; the gradient at input == target is 0."""
    input, target = _broadcast_pair("l1_loss", *cast_early(L1Loss, input, target))
    reduction = _reduction(size_average, reduce, reduction)
    # PyTorch's l1_loss is abs(input - target) then its mean or sum: the node is that reduction's
    return named(L1Loss.apply(input, target, reduction=reduction), _L1_NODES[reduction])


_L1_NODES = {"mean": "MeanBackward0", "sum": "SumBackward0", "none": "AbsBackward0"}


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target; beta = 0: l1_loss)."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    input, target = _broadcast_pair("smooth_l1_loss", input, target)
    return SmoothL1Loss.apply(input, target, reduction=_reduction(size_average, reduce, reduction),
                              beta=float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| <= delta, delta (|d| - 0.5 delta) elsewhere (= delta * smooth_l1 with beta = delta);
    ``weight`` multiplies each element's loss before the reduction."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    input, target = _broadcast_pair("huber_loss", input, target)
    reduction = _reduction(None, None, reduction)
    if weight is None:
        return HuberLoss.apply(input, target, reduction=reduction, delta=float(delta))
    losses = HuberLoss.apply(input, target, reduction="none", delta=float(delta)) * weight
    return losses if reduction == "none" else losses.sum() if reduction == "sum" else losses.mean()


def _like_input(name: str, what: str, t: Any, input: Tensor, must_match: bool) -> Tensor | None:
    """``t`` as a tensor in input's dtype; with ``must_match`` its shape must equal input's, otherwise it
    must broadcast to it."""
    if t is None:
        return None
    t = as_tensor(t, device=input.device)
    if t.array.dtype != input.array.dtype:
        t = t.to(input.dtype)
    if must_match:
        if t.shape != input.shape:
            raise ValueError(f"{name}: {what} size {tuple(t.shape)} must be the same as input size "
                             f"{tuple(input.shape)}")
    elif np.broadcast_shapes(t.shape, input.shape) != input.shape:
        raise ValueError(f"{name}: {what} of shape {tuple(t.shape)} does not broadcast to the input "
                         f"shape {tuple(input.shape)}")
    return t


def _float_input(name: str, input: Tensor) -> None:
    if not input.is_floating_point():
        raise TypeError(f"{name}: input must be a floating point tensor, got {input.dtype}")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)) for probabilities x in [0, 1], each log clamped at -100 as
    PyTorch (so x = 0 or 1 gives a finite loss). ``weight`` broadcasts to the input's shape."""
    input, target, weight = cast_early(BinaryCrossEntropy, input, target, weight)
    _float_input("binary_cross_entropy", input)
    target = _like_input("binary_cross_entropy", "target", target, input, must_match=True)  # type: ignore[assignment]
    weight = _like_input("binary_cross_entropy", "weight", weight, input, must_match=False)
    # PyTorch's checks (nan fails them too); one host sync for both in the common, valid case.
    bad_input, bad_target = ((~((a >= 0) & (a <= 1))).any() for a in (input.array, target.array))
    if bool(bad_input | bad_target):
        if bool(bad_input):
            raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 and 1 "
                               "(pass logits to binary_cross_entropy_with_logits instead)")
        raise RuntimeError("binary_cross_entropy: all elements of target should be between 0 and 1")
    return BinaryCrossEntropy.apply(input, target, weight, None,
                                    reduction=_reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """BCE of sigmoid(input), in log-sum-exp form: w ((1 - t) x - (1 + (p - 1) t) log sigmoid(x)) with
    p = pos_weight (broadcast over the last dim, e.g. one per class); finite for any finite x."""
    name = "binary_cross_entropy_with_logits"
    input, target, weight, pos_weight = cast_early(BinaryCrossEntropyWithLogits, input, target, weight,
                                                   pos_weight)
    _float_input(name, input)
    target = _like_input(name, "target", target, input, must_match=True)  # type: ignore[assignment]
    weight = _like_input(name, "weight", weight, input, must_match=False)
    pos_weight = _like_input(name, "pos_weight", pos_weight, input, must_match=False)
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight,
                                              reduction=_reduction(size_average, reduce, reduction))
