"""The probabilistic losses of ``torch.nn.functional``: kl_div (one Function for its pointwise terms, whose
xlogy form needs a guarded log), poisson_nll_loss and gaussian_nll_loss (composed of tensor ops, as PyTorch's
are), with ``loss.py``'s reductions."""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import as_tensor, full_like
from ..tensor import Tensor
from ._util import ClampMinValue, broadcast_error, broadcast_shapes_or_none, promote, torch_dtype_name
from .indexing import where
from .loss import _reduce_tensor, _reduction
from .reduce import any as _any
from ..amp.autocast_mode import cast_early
from ..amp.policy import MarginLoss

__all__ = ["kl_div", "poisson_nll_loss", "gaussian_nll_loss"]

_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the support size."
                 "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                 "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


class KLDiv(ArrayFunction):
    """The pointwise terms of kl_div, x and t broadcast: xlogy(t, t) - t x (0 where t == 0, nan where t < 0),
    or exp(t) (t - x) for a log-space target. The gradients are those of PyTorch's formulas: d/dx = -t
    (-exp(t)); d/dt = log t + 1 - x, nan where t <= 0 as xlogy's (exp(t) (t - x + 1))."""

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, t: Any, *, log_target: bool) -> Any:
        ctx.save_for_backward(x, t)
        ctx.log_target = log_target
        if log_target:
            return B.exp(t) * (t - x)
        with np.errstate(divide="ignore", invalid="ignore"):  # log 0 is masked; log of a negative t is nan
            return B.where(t == 0, 0, t * B.log(t)) - t * x

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        x, t = ctx.saved_arrays
        need_x, need_t = ctx.needs_input_grad[:2]
        if ctx.log_target:
            ge = g * B.exp(t)
            return (-ge if need_x else None), (ge * (t - x + 1) if need_t else None)
        if not need_t:
            return -g * t, None
        with np.errstate(divide="ignore", invalid="ignore"):  # t / t: 1, or nan at t == 0 as PyTorch's
            gt = g * (B.log(t) + t / t - x)
        return (-g * t if need_x else None), gt


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """sum of target (log target - input) over the elements (input: log-probabilities; target: probabilities,
    or log-probabilities with ``log_target``), input and target broadcast. 'batchmean' divides by input's
    first dim (the KL divergence per sample); 'mean' divides by the element count, with PyTorch's warning."""
    target = as_tensor(target, device=input.device)
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn(_MEAN_WARNING, stacklevel=2)
    elif reduction != "batchmean":
        reduction = _reduction(None, None, reduction)
    if broadcast_shapes_or_none(input.shape, target.shape) is None:
        raise broadcast_error([tuple(target.shape), tuple(input.shape)])  # PyTorch names target as a
    losses = KLDiv.apply(*promote(input, target), log_target=bool(log_target))
    if reduction == "batchmean":
        return losses.sum() / input.shape[0] if input.ndim else losses.sum()
    return _reduce_tensor(losses, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target input (``log_input``: input is the log of the rate), else input - target
    log(input + eps); ``full`` adds Stirling's term target log target - target + log(2 pi target) / 2 where
    target > 1. input and target broadcast."""
    reduction = _reduction(size_average, reduce, reduction)
    input, target = cast_early(MarginLoss, input, target)  # autocast: float32, as PyTorch's
    losses = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        kept = target > 1
        t = where(kept, target, 1.0)  # the masked-out targets' logs stay finite and their gradient 0
        losses = losses + where(kept, t * t.log() - t + 0.5 * (2 * math.pi * t).log(), 0.0)
    return _reduce_tensor(losses, reduction)


def _gaussian_var(input: Tensor, var: Any) -> Tensor:
    """var as a tensor that broadcasts against input, by PyTorch's rules: input's shape; input's shape
    without its last dim (a trailing 1 is added); or input's dims with exactly one of them of size 1 (one
    variance shared over that dim). A float is one variance for every element."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return full_like(input, var)
    if bool(_any(var < 0)):  # a non-tensor var fails here with any()'s TypeError, as in PyTorch
        raise ValueError("var has negative entry/entries")
    if not var.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type {torch_dtype_name(var.dtype)}")
    if var.shape == input.shape:
        return var
    if input.shape[:-1] == var.shape:
        return var.unsqueeze(-1)
    if input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """(log v + (input - target)^2 / v) / 2 with v = max(var, eps) (+ log(2 pi) / 2 with ``full``): the
    negative log-likelihood of target under N(input, var). The eps floor takes no part in var's gradient,
    as PyTorch's (a clamp under no_grad)."""
    var = ClampMinValue.apply(_gaussian_var(input, var), lo=float(eps))
    reduction = _reduction(None, None, reduction)
    losses = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce_tensor(losses, reduction)
