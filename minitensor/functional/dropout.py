"""Dropout: zero each element with probability p while training, scaling the rest by 1 / (1 - p)."""
from __future__ import annotations

import math
import warnings
from typing import Any

from ..autograd.function import ArrayFunction
from ..tensor import Tensor
from ..backends.base import Backend
from ..creation import full, ones
from .inplace import inplace as _inplace

__all__ = ["dropout"]
__all__ += ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


class Dropout(ArrayFunction):
    """y = x * mask / (1 - p); the boolean mask (from the device's generator) is saved for backward."""
    torch_name = "MulBackward0"  # PyTorch's dropout multiplies by its scaled mask

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, *, p: float) -> Any:
        y, mask = B.dropout(x, p)
        ctx.save_for_backward(mask)
        ctx.p = p
        return y

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        mask, = ctx.saved_arrays
        return B.dropout_backward(gy, mask, ctx.p)


def _dropout(input: Tensor, p: float) -> Tensor:
    return Dropout.apply(input, p=p)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """While ``training``, each element is zeroed with probability ``p`` and the others are scaled by
    1 / (1 - p), so the expectation is unchanged; otherwise (or with p = 0) ``input`` itself comes back.
    ``manual_seed`` makes the mask reproducible."""
    if not _active(input, p, training):
        return input
    if inplace:
        return _inplace(input, _dropout, float(p))
    return _dropout(input, float(p))


def _active(input: Tensor, p: float, training: bool) -> bool:
    """Checks p and the dtype; False when dropout is the identity (eval mode or p = 0)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return False
    if not input.is_floating_point():
        raise TypeError(f"dropout: input must be a floating point tensor, got {input.dtype}")
    return True


def _trivial_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature_dims: int | None
                     ) -> Tensor | None:
    """What a dropout that needs no draws returns (PyTorch's order: ``input`` itself in eval mode, with p = 0
    or when empty; ``input * 0`` for p = 1, NaN kept), or None; a feature dropout (``feature_dims``: the
    input's dims counting its batch) then needs 2 dims."""
    if not _active(input, p, training) or input.numel() == 0:
        return input
    if p == 1:
        return _inplace(input, lambda t: t * 0) if inplace else input * 0
    if feature_dims is not None and feature_dims < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return None


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched: bool = True) -> Tensor:
    """Whole channels zeroed: one kept-and-scaled factor per (n, c) (per c when not ``batched``), from dropout
    of an (N, C, 1, ...) array of ones, multiplied in by broadcasting (the gradient is the same factor).
    As PyTorch's feature_dropout: an empty input or p = 0 comes back as is and p = 1 is ``input * 0`` (NaN
    stays NaN) before any channel is needed; only then does a (batched) input need 2 dims."""
    trivial = _trivial_dropout(input, p, training, inplace, input.ndim + (0 if batched else 1))
    if trivial is not None:  # (PyTorch adds a missing batch dim first)
        return trivial
    kept = 2 if batched else 1
    factor = _dropout(ones(*input.shape[:kept], *(1,) * (input.ndim - kept), dtype=input.dtype,
                           device=input.device), float(p))
    return _inplace(input, lambda t: t * factor) if inplace else input * factor


def _deprecated_dims(name: str, input: Tensor, dims: tuple[int, int]) -> None:
    if input.ndim not in dims:
        spatial = dims[0] - 1
        warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please "
                      f"use dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
                      f"{spatial} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{dims[0]}D or {dims[1]}D inputs).", stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, L) or (C, L): each channel zeroed with probability p, the rest scaled
    by 1 / (1 - p)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, batched=input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, H, W); a 3-D input is taken as (N, C, L), with PyTorch's warning."""
    _deprecated_dims("dropout2d", input, (3, 4))
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W); any other input is unbatched (PyTorch's
    rule: channels along its first dim), with PyTorch's warning."""
    _deprecated_dims("dropout3d", input, (4, 5))
    return _feature_dropout(input, p, training, inplace, batched=input.ndim == 5)


SELU_SATURATION = 1.7580993408473766  # SELU's scale * alpha: a dropped unit goes to SELU's negative limit


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """PyTorch's alpha dropout: with keep ~ Bernoulli(1 - p) (one per element, or per (n, c) for
    ``feature``), y = a (x keep + alpha' (1 - keep)) + b, a = ((alpha^2 p + 1)(1 - p))^-1/2,
    alpha' = -alpha, b = alpha a p: a SELU network's zero mean and unit variance are kept."""
    trivial = _trivial_dropout(input, p, training, inplace, input.ndim if feature else None)
    if trivial is not None:
        return trivial
    shape = (*input.shape[:2], *(1,) * (input.ndim - 2)) if feature else tuple(input.shape)
    keep = full(shape, 1 - p, dtype=input.dtype, device=input.device).bernoulli()
    a = 1.0 / math.sqrt((SELU_SATURATION ** 2 * p + 1) * (1 - p))
    shift = (keep - 1) * (SELU_SATURATION * a) + SELU_SATURATION * a * p
    scale = keep * a
    return _inplace(input, lambda t: t * scale + shift) if inplace else input * scale + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks (``_alpha_dropout``): each element set, with probability ``p``, to SELU's
    saturation value, then an affine map that keeps the mean and variance. The identity unless ``training``
    (which defaults to False here, as in PyTorch)."""
    return _alpha_dropout(input, float(p), training, inplace, feature=False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels: one draw per (n, c) of an (N, C, ...) input."""
    return _alpha_dropout(input, float(p), training, inplace, feature=True)
