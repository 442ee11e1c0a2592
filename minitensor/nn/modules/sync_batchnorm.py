"""``SyncBatchNorm``: batch normalisation whose statistics cover the batch of every rank of a process group.

Per forward, one ``all_reduce`` of [sum x, sum x^2, count] per channel (accumulated in float64, so that
var = E[x^2] - E[x]^2 does not cancel in float32); per backward, one ``all_reduce`` of [sum gy, sum gy xhat].
Without an initialised process group, with one rank, or outside training it is ``BatchNorm`` (PyTorch's
fallbacks).
"""
from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...autograd import Function
from ...functional.shape import cat
from ...tensor import Tensor
from .. import functional as F
from .batchnorm import _BatchNorm
from .instancenorm import _InstanceNorm
from .module import Module


def _channel_shape(x: Tensor) -> list[int]:
    """(1, C, 1, ...): a per-channel vector's shape against x (N, C, *)."""
    return [1, -1] + [1] * (x.dim() - 2)


class _SyncBatchNormFunction(Function):
    """y = (x - mean) invstd w + b with mean and var over every rank's (N, *) per channel.

    backward: with xhat = (x - mean) invstd and M the global count per channel,
    gx = w invstd (gy - sum(gy) / M - xhat sum(gy xhat) / M), the sums all-reduced; gw = sum(gy xhat) and
    gb = sum(gy) are this rank's own (DistributedDataParallel reduces them), as PyTorch's.
    """

    @staticmethod
    def forward(ctx: Any, x: Tensor, weight: Tensor | None, bias: Tensor | None,  # type: ignore[override]
                running_mean: Tensor | None, running_var: Tensor | None, eps: float, momentum: float,
                group: Any) -> Tensor:
        from ... import distributed as dist
        channels = x.shape[1]
        axes = tuple(d for d in range(x.dim()) if d != 1)
        count = x.numel() // channels
        stats = cat([x.sum(dim=axes, dtype=_dt.float64), (x * x).sum(dim=axes, dtype=_dt.float64),
                     x.new_full((1,), count, dtype=_dt.float64)])
        dist.all_reduce(stats, group=group)  # the one collective of the forward
        total = float(stats[-1])
        if total <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {total:g}")
        mean64 = stats[:channels] / total
        var64 = (stats[channels:2 * channels] / total - mean64 * mean64).clamp(min=0)  # biased
        mean, var = mean64.to(x.dtype), var64.to(x.dtype)
        invstd = (var + eps).rsqrt()
        shape = _channel_shape(x)
        xhat = (x - mean.reshape(shape)) * invstd.reshape(shape)
        y = xhat if weight is None else xhat * weight.reshape(shape)
        y = y if bias is None else y + bias.reshape(shape)
        if running_mean is not None and running_var is not None:  # the unbiased variance, as BatchNorm's
            running_mean.mul_(1 - momentum).add_(mean64.to(running_mean.dtype) * momentum)
            running_var.mul_(1 - momentum).add_((var64 * (total / (total - 1))).to(running_var.dtype) * momentum)
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.total, ctx.group = total, group
        return y

    @staticmethod
    def backward(ctx: Any, gy: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
        from ... import distributed as dist
        x, weight, mean, invstd = ctx.saved_arrays
        channels, shape = x.shape[1], _channel_shape(x)
        axes = tuple(d for d in range(x.dim()) if d != 1)
        xhat = (x - mean.reshape(shape)) * invstd.reshape(shape)
        sum_dy, sum_dy_xhat = gy.sum(dim=axes), (gy * xhat).sum(dim=axes)
        gx = None
        if ctx.needs_input_grad[0]:
            sums = cat([sum_dy, sum_dy_xhat])
            dist.all_reduce(sums, group=ctx.group)  # the one collective of the backward
            scale = invstd if weight is None else invstd * weight
            gx = scale.reshape(shape) * (gy - (sums[:channels] / ctx.total).reshape(shape)
                                         - xhat * (sums[channels:] / ctx.total).reshape(shape))
        gw = sum_dy_xhat if weight is not None and ctx.needs_input_grad[1] else None
        gb = sum_dy if ctx.needs_input_grad[2] else None
        return gx, gw, gb, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """``BatchNorm`` over input (N, C, *) whose training statistics are those of the batches of every rank of
    ``process_group`` (the default group when None).

    As PyTorch's: in eval mode, without an initialised process group, or with one rank it is plain batch
    norm; running statistics and ``momentum=None``'s cumulative average as ``BatchNorm``'s, from the global
    batch. Unlike PyTorch's it runs on CPU tensors too (the MPI backend; PyTorch's needs GPU input).
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        from ... import distributed as dist
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        running_mean = self.running_mean if track else None
        running_var = self.running_var if track else None
        group = None
        need_sync = bn_training and self.training and dist.is_available() and dist.is_initialized()
        if need_sync:
            group = self.process_group or dist.group.WORLD
            need_sync = dist.get_world_size(group) > 1
        if not need_sync:
            return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training, factor,
                                self.eps)
        return _SyncBatchNormFunction.apply(input, self.weight, self.bias, running_mean, running_var,
                                            float(self.eps), float(factor), group)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every BatchNorm layer in it (itself included) replaced by a ``SyncBatchNorm``
        sharing its parameters and buffers (not InstanceNorm: PyTorch's is no ``_BatchNorm``, ours is)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
