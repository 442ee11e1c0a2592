"""The ``nn.functional`` ops that PyTorch also has at its top level (``torch.conv2d``, ``torch.dropout``...),
with the top level's signatures: those are ATen's, so some differ from ``F``'s (``dropout(input, p, train)``
with ``train`` required, ``embedding(weight, indices)``, ``batch_norm``'s order, losses taking ``reduction`` as
ATen's integer: 0 none, 1 mean, 2 sum; left out it is 0, as PyTorch 2.13's top-level losses give each
element's loss).
"""
from __future__ import annotations

from typing import Any, Sequence

from .nn import functional as F
from .nn.functional import (adaptive_avg_pool1d, avg_pool1d, bilinear, channel_shuffle, conv1d, conv2d,  # noqa: F401
                            conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, pixel_shuffle,
                            pixel_unshuffle, rms_norm, conv_tbc, native_channel_shuffle)
from .tensor import Tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "batch_norm", "bilinear", "channel_shuffle",
           "binary_cross_entropy_with_logits", "rms_norm",
           "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "cosine_embedding_loss", "dropout", "embedding", "group_norm", "hinge_embedding_loss", "instance_norm",
           "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d", "pixel_shuffle",
           "pixel_unshuffle", "poisson_nll_loss", "triplet_margin_loss", "ctc_loss", "norm_except_dim"]
__all__ += ["conv_tbc", "native_channel_shuffle"]

_REDUCTIONS = ("none", "mean", "sum")  # ATen's Reduction enum, by value


def _reduction(reduction: int) -> str:
    if isinstance(reduction, bool) or not isinstance(reduction, int) or not 0 <= reduction < 3:
        raise TypeError(f"reduction must be an int in 0..2 (0 none, 1 mean, 2 sum), got {reduction!r}")
    return _REDUCTIONS[reduction]


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """ATen's order (weight first); ``padding_idx=-1`` means none there (a negative index is not counted back)."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def _max_pool(pool: Any) -> Any:
    def max_pool(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
                 ceil_mode: bool = False) -> Tensor:
        # ATen's empty stride means "the kernel size", F's None
        return pool(input, kernel_size, stride if stride not in ((), []) else None, padding, dilation, ceil_mode)
    max_pool.__name__ = max_pool.__qualname__ = pool.__name__
    return max_pool


max_pool1d, max_pool2d, max_pool3d = (_max_pool(p) for p in (F.max_pool1d, F.max_pool2d, F.max_pool3d))


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """ATen's form returns (values, indices)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (shape ``(1,..,v.size(dim),..,1)``);
    ``dim=-1`` is ATen's "no dim": the norm of the whole tensor, 0-d (not the last dim)."""
    from .functional.shape import movedim
    from .linalg import vector_norm
    if dim == -1:
        return vector_norm(v, pow)
    dim %= v.ndim
    # as ATen: dim first, the rest flattened into one axis (of size 1 when there is no other dim, whose
    # norm's gradient is then x / |x|, NaN at inf or NaN, not abs's sign)
    rows = movedim(v, dim, 0).reshape(v.shape[dim], -1)
    return vector_norm(rows, pow, dim=1).reshape([v.shape[dim] if d == dim else 1 for d in range(v.ndim)])


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """Weight normalization ``w = g * v / ||v||`` (norm over every dim but ``dim``; ``dim=-1``: the whole ``v``)."""
    return v * (g / norm_except_dim(v, 2, dim))
