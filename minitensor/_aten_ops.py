"""PyTorch's top-level ATen forms that programs and exported code call: ``convolution`` (dispatching to the
conv / conv_transpose ops), ``constant_pad_nd``, the ``native_*`` normalizations and ``native_dropout`` with
their tuple returns (the saved statistics), ``max_pool1d_with_indices``, the top-level dropouts
(``dropout_``, ``alpha_dropout(_)``, ``feature_dropout(_)``, ``feature_alpha_dropout(_)``: ATen's
``(input, p, train)``), and the deprecated ``nuclear_norm`` / ``frobenius_norm``.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

from . import dtypes as _dt
from .functional import dropout as _D
from .functional import norms as _norms
from .functional.pooling_windows import max_pool1d_with_indices as _max_pool1d_with_indices
from .nn import functional as F
from .tensor import Tensor

__all__ = ["alpha_dropout", "alpha_dropout_", "constant_pad_nd", "convolution", "dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "feature_dropout", "feature_dropout_", "frobenius_norm",
           "max_pool1d_with_indices", "native_batch_norm", "native_dropout",
           "native_group_norm", "native_layer_norm", "nuclear_norm"]

_CONVS: dict[tuple[int, bool], Any] = {(1, False): F.conv1d, (2, False): F.conv2d, (3, False): F.conv3d,
          (1, True): F.conv_transpose1d, (2, True): F.conv_transpose2d, (3, True): F.conv_transpose3d}


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int) -> Tensor:
    """ATen's one convolution: ``conv{1,2,3}d`` or, ``transposed``, ``conv_transpose{1,2,3}d`` by the weight's
    dims (out, in / groups, *k) or (in, out / groups, *k)."""
    n = weight.ndim - 2
    if (n, bool(transposed)) not in _CONVS:
        raise RuntimeError(f"convolution: expected a weight of 3, 4 or 5 dims, got {weight.ndim}")
    conv = _CONVS[n, bool(transposed)]
    if transposed:
        return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups, tuple(dilation))
    if any(output_padding):
        raise RuntimeError("convolution: output_padding is only for transposed convolutions")
    return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """``F.pad(input, pad, 'constant', value)``: pairs from the last dim backwards; negative pads crop."""
    return F.pad(input, list(pad), "constant", value)


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None, bias: Tensor | None,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(layer_norm, mean, rstd): mean and 1 / sqrt(var + eps) (biased var) over the normalized dims, kept as
    size-1 dims: shape input.shape[:-len(normalized_shape)] + (1,) * len(normalized_shape)."""
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    out = F.layer_norm(input, list(normalized_shape), weight, bias, eps)
    mean, rstd = _statistics(input, dims, eps)
    return out, mean, rstd


def _statistics(x: Tensor, dims: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor]:
    """(mean, 1 / sqrt(biased var + eps)) over ``dims``, kept, without a graph (saved statistics)."""
    x = x.detach()
    return x.mean(dims, keepdim=True), (x.var(dims, correction=0, keepdim=True) + eps).rsqrt()


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float,
                      eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(batch_norm, save_mean, save_invstd): in training the batch's mean and 1 / sqrt(biased var + eps) per
    channel (C,), the running statistics updated as ``F.batch_norm``; in evaluation two empty tensors."""
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = input.new_empty(0)
        return out, empty, empty.clone()
    dims = (0, *range(2, input.ndim))
    mean, invstd = _statistics(input, dims, eps)
    return out, mean.reshape(-1), invstd.reshape(-1)


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int, HxW: int,
                      group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(group_norm, mean, rstd), the statistics of each (sample, group): shape (N, group)."""
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _statistics(input.reshape(N, group, -1), (2,), eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """(output, mask): while ``train`` (None counts as True), each element kept (mask True) with probability
    1 - p and scaled by 1 / (1 - p); otherwise a copy of ``input`` and a mask of True."""
    from .creation import ones_like, rand_like, zeros_like
    if train is None or train:
        if p == 1:
            return input * 0, zeros_like(input, dtype=_dt.bool)
        mask = rand_like(input) >= p  # the device's stream, as dropout's
        return input * mask * (1.0 / (1.0 - p)), mask
    return input.clone(), ones_like(input, dtype=_dt.bool)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """(values, indices) of ``max_pool1d``; ATen's empty ``stride`` means the kernel size."""
    return _max_pool1d_with_indices(input, kernel_size, stride if stride not in ((), []) else None, padding,
                                     dilation, ceil_mode)


# ATen's top-level dropouts: (input, p, train), train required; the ``_`` forms write into input.
def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Whole channels (dim 1 of (N, C, ...)) zeroed with probability p, the rest scaled by 1 / (1 - p)."""
    return _D._feature_dropout(input, float(p), train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _D._feature_dropout(input, float(p), train, True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The sum of singular values of each matrix over ``dim`` (default the last two); deprecated in PyTorch
    for ``linalg.matrix_norm(A, 'nuc', dim, keepdim)``. ``nuclear_norm(input, keepdim)`` also works."""
    warnings.warn("nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
                  "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    return _norms.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def frobenius_norm(input: Tensor, dim: Sequence[int], keepdim: bool = False) -> Tensor:
    """sqrt(sum x^2) over ``dim`` (at most two dims); deprecated in PyTorch for ``linalg.vector_norm(A, 2, dim,
    keepdim)``."""
    warnings.warn("frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
                  "future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return _norms.vector_norm(input, 2, dims, keepdim)


