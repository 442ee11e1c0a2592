"""``BatchNorm1d``, ``BatchNorm2d`` and ``BatchNorm3d``: per-channel normalisation with running statistics
(``SyncBatchNorm``, across ranks, is in ``sync_batchnorm.py``)."""
from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from ...creation import ones, tensor, zeros
from .. import functional as F, init
from .module import Module
from .utils import optional_parameters


class _BatchNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1); ``bias=False`` (PyTorch 2.x,
    keyword-only) keeps the weight and drops the bias.

    Training normalises with the batch statistics and, with ``track_running_stats``, updates the buffers
    running_mean / running_var (unbiased variance): r = (1 - m) r + m s with m = ``momentum``, or the
    cumulative average m = 1 / num_batches_tracked when ``momentum`` is None. Evaluation uses the running
    statistics (the batch's when they are not tracked).
    """

    _expected_dims: tuple[int, ...]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        optional_parameters(self, affine, ("weight",), num_features, device=device, dtype=dtype)
        optional_parameters(self, affine and bias, ("bias",), num_features, device=device, dtype=dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._expected_dims:
            dims = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"expected {dims} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch_stats = self.training or self.running_mean is None
        # In training without tracked stats F.batch_norm gets no buffers to update.
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L) input, statistics over N (and L)."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W) input, statistics over N, H and W."""
    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Over (N, C, D, H, W) input, statistics over N, D, H and W."""
    _expected_dims = (5,)
