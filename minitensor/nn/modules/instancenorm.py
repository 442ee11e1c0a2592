"""``InstanceNorm1d/2d/3d``: each (sample, channel) normalised over its spatial dims."""
from __future__ import annotations

import warnings
from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .batchnorm import _BatchNorm
from .utils import dim_variants


class _InstanceNorm(_BatchNorm):
    """y = (x - mean) / sqrt(var + eps) * weight + bias with the statistics of each (n, c) over the spatial
    dims. No affine parameters and no running statistics by default; with ``track_running_stats`` the
    buffers follow the instances' mean statistics in training and normalise in eval mode."""

    _dims: int

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._dims - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        batched = input if feature_dim == 1 else input.unsqueeze(0)
        out = F.instance_norm(batched, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out if feature_dim == 1 else out.squeeze(0)



InstanceNorm1d, InstanceNorm2d, InstanceNorm3d = dim_variants(
    _InstanceNorm, "InstanceNorm{n}d", "Over (N, C, {spatial}) or (C, {spatial}).", __name__)
