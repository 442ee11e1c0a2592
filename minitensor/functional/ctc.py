"""ctc_loss: the connectionist temporal classification loss of ``torch.nn.functional``, one Function
(``CTCLoss``) on the backend's ``ctc_loss`` / ``ctc_loss_backward`` (``backends/generic/ctc.py``: the alpha
recursion, one vectorised step per time step, and PyTorch's alpha-beta gradient), with PyTorch's argument
forms, checks and reductions composed of tensor ops.

The targets and lengths are checked and laid out on the host, as PyTorch reads the lengths there too: the
targets become one (N, max target length) array, whether given padded (N, S) or concatenated (sum of the
target lengths,).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import as_tensor
from ..tensor import Tensor
from ._util import torch_dtype_name
from .loss import _reduction
from ..amp.autocast_mode import cast_early

__all__ = ["ctc_loss"]

_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"  # PyTorch's suffix of these checks


class CTCLoss(ArrayFunction):
    """(N,) negative log-likelihoods of the targets (0 for the infinite ones with zero_infinity); the
    gradient of log_probs only (PyTorch's; see ``backends/generic/ctc.py``). PyTorch's ctc_loss has no
    double backward either: the forward variables saved here make create_graph raise."""

    @staticmethod
    def forward(ctx: Any, B: Backend, log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, *,
                blank: int, zero_infinity: bool) -> Any:
        nll, log_alpha = B.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank)
        ctx.save_for_backward(log_probs, targets, input_lengths, target_lengths, nll, log_alpha)
        ctx.blank, ctx.zero_infinity = blank, zero_infinity
        return B.where(nll == math.inf, 0, nll) if zero_infinity else nll

    @staticmethod
    def backward(ctx: Any, B: Backend, g: Any) -> Any:
        log_probs, targets, input_lengths, target_lengths, nll, log_alpha = ctx.saved_arrays
        grad = B.ctc_loss_backward(g, log_probs, targets, input_lengths, target_lengths, nll, log_alpha,
                                   ctx.blank, ctx.zero_infinity)
        return grad, None, None, None


def _lengths(name: str, lengths: Any) -> np.ndarray:
    """A tensor of integers (any shape: its elements) or a sequence of ints, as a host int64 array."""
    if isinstance(lengths, Tensor):
        if lengths.array.dtype.kind not in "iu":  # PyTorch refuses bool, float and complex lengths
            raise RuntimeError(f"{name} must be integral")
        return lengths.detach().cpu().numpy().astype(np.int64).reshape(-1)
    if not isinstance(lengths, Sequence) or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                     for v in lengths):
        raise TypeError(f"ctc_loss(): {name} must be a tuple or list of ints or an integer tensor, got "
                        f"{lengths!r}")
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _check(log_probs: Tensor, targets: Tensor, input_lengths: np.ndarray, target_lengths: np.ndarray,
           blank: int) -> None:
    """PyTorch's checks of the operands (log_probs already (T, N, C)), with its wording."""
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional tensor for "
                           f"argument #1 'log_probs'{_WHERE}")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional tensor for "
                           f"argument #2 'targets'{_WHERE}")
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.size != batch:
            raise RuntimeError(f"{name} must be of size batch_size")
    if (target_lengths < 0).any():
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                           f"{target_lengths[target_lengths < 0][0]}{_WHERE}")
    if targets.dim() == 1 and targets.shape[0] != target_lengths.sum():
        raise RuntimeError(f"Expected tensor to have size {target_lengths.sum()} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{_WHERE}")
    if targets.dim() == 2:
        if targets.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets'{_WHERE}")
        longest = int(target_lengths.max(initial=0))
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets'{_WHERE}")
    for bad, bound in ((input_lengths < 0, "at least 0"), (input_lengths > steps, f"at most {steps}")):
        if bad.any():
            raise RuntimeError(f"Expected input_lengths to have value {bound}, but got value "
                               f"{input_lengths[bad][0]}{_WHERE}")


def _padded_targets(targets: Tensor, target_lengths: np.ndarray, classes: int) -> np.ndarray:
    """(N, max target length) int64 labels on the host; the entries past each target's length are 0."""
    values = targets.detach().cpu().numpy()
    longest = int(target_lengths.max(initial=0))
    used = np.arange(longest)[None, :] < target_lengths[:, None]
    if targets.dim() == 2:
        padded = values[:, :longest]
    else:  # concatenated: sample n's labels start after those of samples 0 .. n - 1
        starts = np.cumsum(target_lengths) - target_lengths
        padded = values[np.minimum(starts[:, None] + np.arange(longest), max(values.shape[0] - 1, 0))] \
            if values.size else np.zeros(used.shape, dtype=np.int64)
    padded = np.where(used, padded, 0).astype(np.int64)  # PyTorch casts the targets to int64 (floats too)
    bad = used & ((padded < 0) | (padded >= classes))
    if bad.any():  # PyTorch's CPU kernel reads out of bounds here; this says so instead
        raise RuntimeError(f"ctc_loss: target {padded[bad][0]} is out of range for log_probs of {classes} "
                           f"classes (labels must be in [0, {classes}))")
    return padded


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss: -log of the summed probability of every alignment of each target to its input.

    log_probs (T, N, C) (or (T, C) unbatched): log-probabilities over C classes per time step, class
    ``blank`` the blank. targets: (N, S) padded or (sum(target_lengths),) concatenated labels in [0, C).
    input_lengths, target_lengths: (N,) integer tensors or tuples/lists of ints (each length <= T, and
    <= S). 'mean' divides each loss by its target length (at least 1), then averages over the batch; an
    impossible alignment's loss is inf, or 0 (with a 0 gradient) under ``zero_infinity``."""
    reduction = _reduction(None, None, reduction)
    (log_probs,) = cast_early(CTCLoss, log_probs)  # autocast: float32, as PyTorch's
    targets = as_tensor(targets, device=log_probs.device)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss(): input_lengths and target_lengths must both be tensors or both be tuples "
                        "or lists of ints")
    in_lengths, tg_lengths = _lengths("input_lengths", input_lengths), _lengths("target_lengths", target_lengths)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if log_probs.dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{torch_dtype_name(log_probs.dtype)}'")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
    _check(log_probs, targets, in_lengths, tg_lengths, int(blank))
    device = log_probs.device
    padded = _padded_targets(targets, tg_lengths, log_probs.shape[2])
    losses = CTCLoss.apply(log_probs, as_tensor(padded, device=device), as_tensor(in_lengths, device=device),
                           as_tensor(tg_lengths, device=device), blank=int(blank), zero_infinity=bool(zero_infinity))
    if reduction == "mean":
        return (losses / as_tensor(np.maximum(tg_lengths, 1), dtype=losses.dtype, device=device)).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.squeeze(0)
