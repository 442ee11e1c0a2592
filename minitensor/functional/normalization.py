"""Normalisation: batch norm and layer norm, each one Function on a fused backend pair."""
from __future__ import annotations

import math

import ml_dtypes
from typing import Any, Sequence

from ..autograd.function import ArrayFunction
from ..tensor import Tensor, _bump_version
from ..backends.base import Backend
from .math import clamp
from .reduce import norm
from ..amp.autocast_mode import cast_early
from ._util import named

__all__ = ["batch_norm", "layer_norm"]
__all__ += ["normalize", "group_norm", "instance_norm"]


def _keep_for_backward(ctx: Any, x: Any, weight: Any, forward: tuple[Any, Any, Any]) -> Any:
    """Save what a fused backward takes, (x, weight, mean, invstd), from a fused forward's
    (y, mean, invstd); return y."""
    y, mean, invstd = forward
    ctx.save_for_backward(x, weight, mean, invstd)
    return y


class BatchNorm(ArrayFunction):
    """y = (x - mean) invstd w + b per channel (axis 1); running statistics are updated in place."""
    torch_name = "NativeBatchNormBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any, *,
                training: bool, momentum: float, eps: float) -> Any:
        ctx.training = training
        return _keep_for_backward(ctx, x, weight, B.batch_norm_forward(x, weight, bias, running_mean,
                                                                       running_var, training, momentum, eps))

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, weight, mean, invstd = ctx.saved_arrays
        need = ctx.needs_input_grad
        gx, gw, gb = B.batch_norm_backward(gy, x, weight, mean, invstd, ctx.training, (need[0], need[3], need[4]))
        return gx, None, None, gw, gb


class LayerNorm(ArrayFunction):
    """y = (x - mean) invstd w + b, statistics over the last ``normalized_ndim`` dims."""
    torch_name = "NativeLayerNormBackward0"  # PyTorch's grad_fn name

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, weight: Any, bias: Any, *, normalized_ndim: int,
                eps: float) -> Any:
        ctx.normalized_ndim = normalized_ndim
        return _keep_for_backward(ctx, x, weight, B.layer_norm_forward(x, weight, bias, normalized_ndim, eps))

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        x, weight, mean, invstd = ctx.saved_arrays
        return B.layer_norm_backward(gy, x, weight, mean, invstd, ctx.normalized_ndim, ctx.needs_input_grad)


def _like(t: Tensor | None, input: Tensor) -> Tensor | None:
    """An affine parameter in the input's dtype (a differentiable cast when it differs)."""
    return t if t is None or t.array.dtype == input.array.dtype else t.to(input.dtype)


def _check_shape(name: str, what: str, t: Tensor | None, shape: tuple[int, ...]) -> None:
    if t is not None and tuple(t.shape) != shape:
        raise ValueError(f"{name}: {what} must have shape {shape}, got {tuple(t.shape)}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of ``input`` (N, C) or (N, C, *) over N and *, then scale by ``weight`` and
    shift by ``bias`` (each (C,)).

    Training uses the batch mean and biased variance and, when given, moves ``running_mean`` and
    ``running_var`` in place: r = (1 - momentum) r + momentum s, with the unbiased variance for r_var.
    Evaluation (``training=False``) uses the running statistics."""
    name = "batch_norm"
    input, weight, bias = cast_early(BatchNorm, input, weight, bias)  # not the running stats: written in place
    if input.ndim < 2:
        raise ValueError(f"{name}: expected input of shape (N, C) or (N, C, *), got {tuple(input.shape)}")
    channels = (input.shape[1],)
    for what, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_shape(name, what, t, channels)
    if not eps > 0:  # eps <= 0 divides a constant channel's 0 by sqrt(0 + eps): nan (PyTorch raises)
        raise RuntimeError(f"{name}: eps must be positive, got {eps}")
    if training:
        if input.shape[0] * math.prod(input.shape[2:]) == 1:
            raise ValueError(f"{name}: expected more than 1 value per channel when training, got input "
                             f"of shape {tuple(input.shape)}")
    elif running_mean is None or running_var is None:
        raise ValueError(f"{name}: running_mean and running_var are needed when training=False")
    if input.numel() == 0:  # an empty batch: an empty output still joined to weight and bias, running
        out = input.clone()  # statistics untouched (PyTorch's _batch_norm_impl_index does the same)
        if weight is not None:
            out = out * weight[0]
        return out if bias is None else out + bias[0]
    out = BatchNorm.apply(input, running_mean, running_var, weight, bias, training=bool(training),
                          momentum=float(momentum), eps=float(eps))
    if training:  # the running statistics were updated in place (an eval graph may have saved them)
        for stat in (running_mean, running_var):
            if stat is not None:
                _bump_version(stat)
    return out


def _normalized_shape(name: str, input: Tensor, normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    """``normalized_shape`` as a tuple, checked to be the end of input's shape."""
    shape = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or input.ndim < len(shape) or tuple(input.shape[-len(shape):]) != shape:
        raise ValueError(f"{name}: given normalized_shape={list(shape)}, expected input with shape "
                         f"[*, {', '.join(map(str, shape))}], but got input of shape {tuple(input.shape)}")
    return shape


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last dims of ``input`` (those of ``normalized_shape``):
    (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance; weight and bias have
    ``normalized_shape``."""
    name = "layer_norm"
    input, weight, bias = cast_early(LayerNorm, input, weight, bias)
    shape = _normalized_shape(name, input, normalized_shape)
    _check_shape(name, "weight", weight, shape)
    _check_shape(name, "bias", bias, shape)
    return LayerNorm.apply(input, _like(weight, input), _like(bias, input), normalized_ndim=len(shape),
                           eps=float(eps))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
              ) -> Tensor:
    """input / max(||input||_p along ``dim``, eps); ``out`` receives the result when given."""
    result = input / clamp(norm(input, p, dim, keepdim=True), min=eps)
    return result if out is None else out.copy_(result)


def _per_channel(t: Tensor, ndim: int) -> Tensor:
    """A (C,) parameter shaped (C, 1, ...) to broadcast over (N, C, *) of ``ndim`` dims."""
    return t.reshape(t.shape[0], *(1,) * (ndim - 2))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise (N, C, *) over each group of C / num_groups channels and *, then weight[c] x + bias[c]:
    layer_norm over the last dim of the (N, G, C/G * prod(*)) view, the affine part per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of channels in input, "
                               f"but got {what} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    size = [n * c // num_groups, num_groups, *input.shape[2:]]
    if size[0] * math.prod(size[2:]) == 1:  # PyTorch checks this in eval mode too: a group of one value is 0
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    grouped = input.reshape(n, num_groups, c // num_groups * math.prod(input.shape[2:]))  # no -1: n may be 0
    out = LayerNorm.apply(grouped, None, None, normalized_ndim=1, eps=float(eps)).reshape(input.shape)
    if weight is not None:
        out = out * _per_channel(weight.to(input.dtype), input.ndim)
    if bias is not None:
        out = out + _per_channel(bias.to(input.dtype), input.ndim)
    return named(out, "NativeGroupNormBackward0")  # PyTorch's one fused node


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (n, c) of (N, C, *) over *, then weight[c] x + bias[c]. As PyTorch: batch_norm of the
    (1, N C, *) view, so the running statistics (given) move towards the instances' mean statistics, and
    ``use_input_stats=False`` normalises with the running statistics instead."""
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    if input.ndim < 3 or math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {tuple(input.shape)}")
    n, c = input.shape[:2]
    for what, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{what} should contain {n * c} elements not {t.numel() * n}")
    stats = [None if t is None else t.repeat(n) for t in (running_mean, running_var)]
    repeat = [None if t is None else t.repeat(n) for t in (weight, bias)]
    out = batch_norm(input.reshape(1, n * c, *input.shape[2:]), stats[0], stats[1], repeat[0], repeat[1], True,
                     momentum, eps).reshape(input.shape)
    for stat, moved in zip((running_mean, running_var), stats):
        if stat is not None and moved is not None:  # each instance moved its own copy: keep their mean
            stat.copy_(moved.reshape(n, c).mean(0))
    return out


__all__ += ["rms_norm", "local_response_norm"]


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2 over the last dims of ``normalized_shape``) + eps) * weight; eps None: the
    machine epsilon of input's dtype, as PyTorch."""
    shape = _normalized_shape("rms_norm", input, normalized_shape)
    _check_shape("rms_norm", "weight", weight, shape)
    if eps is None:
        eps = float(ml_dtypes.finfo(input.dtype.np).eps)
    dims = tuple(range(-len(shape), 0))
    out = input * (input * input).mean(dims, keepdim=True).add(eps).rsqrt()
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """AlexNet's normalization across channels, as PyTorch composes it: for input (N, C, ...),
    y_c = x_c / (k + alpha / size * sum over the ``size`` channels around c of x^2) ^ beta, the window
    zero-padded (size // 2 before, (size - 1) // 2 after)."""
    from .pooling import avg_pool2d, avg_pool3d
    from .shape import pad
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = pad(div.reshape(sizes[0], 1, sizes[1], sizes[2], -1), (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k) ** beta
