"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``, ``AdaptiveMaxPool1d/2d/3d``,
``MaxUnpool1d/2d/3d``, ``LPPool1d/2d/3d``, ``FractionalMaxPool2d/3d``."""
from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import dim_variants


class _PoolNd(Module):
    """The window every pooling layer slides: ``kernel_size``, ``stride`` (``kernel_size`` when None),
    ``padding`` and ``ceil_mode``; ``_dims`` spatial dims."""
    _dims = 2

    def __init__(self, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode


class _MaxPoolNd(_PoolNd):
    """The maximum over each kernel window of (N, C, *spatial); ``stride`` defaults to ``kernel_size``.
    ``return_indices=True`` also returns the flat index of each maximum in its plane, for MaxUnpool."""

    _repr_options = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.dilation = dilation
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self._dims - 1]
        return pool(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                    return_indices=self.return_indices)


class _AvgPoolNd(_PoolNd):
    """The mean over each kernel window; ``count_include_pad`` counts zero padding in the divisor and
    ``divisor_override`` replaces the divisor."""

    _repr_options = ("kernel_size", "stride", "padding")

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode)
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        if self._dims == 1:
            return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                self.count_include_pad)
        pool = F.avg_pool2d if self._dims == 2 else F.avg_pool3d
        return pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                    self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    """Averages (N, C, *spatial) down to (N, C, *output_size) with windows chosen to cover the input;
    a None entry in ``output_size`` keeps that input size."""
    _dims = 2
    _repr_options = ("output_size",)

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._dims - 1]
        return pool(input, self.output_size)


MaxPool1d, MaxPool2d, MaxPool3d = dim_variants(
    _MaxPoolNd, "MaxPool{n}d", "Over (N, C, {spatial}) or (C, {spatial}).", __name__)


class AvgPool1d(_AvgPoolNd):
    """Over (N, C, L) or (C, L); the sizes are kept as 1-tuples, as PyTorch's."""
    _dims = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__(_ntuple(kernel_size, 1), _ntuple(stride if stride is not None else kernel_size, 1),
                         _ntuple(padding, 1), ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Over (N, C, H, W) or (C, H, W)."""
    _dims = 2


class AvgPool3d(_AvgPoolNd):
    """Over (N, C, D, H, W) or (C, D, H, W)."""
    _dims = 3


AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d = dim_variants(
    _AdaptiveAvgPoolNd, "AdaptiveAvgPool{n}d", "Averages the last {n} dims down to ``output_size`` with windows "
    "chosen to cover the input; a None entry keeps that input size.", __name__)


class _AdaptiveMaxPoolNd(Module):
    """The max of (N, C, *spatial) over windows chosen to cover the input, (N, C, *output_size); with
    ``return_indices`` also each max's flat position in its input plane."""
    _dims = 2
    _repr_options = ("output_size",)

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._dims - 1]
        return pool(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Over (N, C, L) or (C, L)."""
    _dims = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Over (N, C, H, W) or (C, H, W); a None entry in ``output_size`` keeps that input size."""


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Over (N, C, D, H, W) or (C, D, H, W); indices are flat positions in each D*H*W volume."""
    _dims = 3


def _ntuple(x: Any, n: int) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _MaxUnpoolNd(Module):
    """Puts the values of MaxPool's output back at its ``indices`` in a zero (N, C, *out)."""
    _dims = 2
    _repr_options = ("kernel_size", "stride", "padding")

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._dims - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)


MaxUnpool1d, MaxUnpool2d, MaxUnpool3d = dim_variants(
    _MaxUnpoolNd, "MaxUnpool{n}d", "MaxPool{n}d's output values back at its indices.", __name__)


class _LPPoolNd(Module):
    """(sum over each window of x**p) ** (1/p) over (N, C, *spatial): ``norm_type`` p (inf: the max of |x|),
    ``stride`` the kernel's when None, no padding."""
    _dims = 2
    _repr_options = ("norm_type", "kernel_size", "stride", "ceil_mode")

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._dims - 1]
        return pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


LPPool1d, LPPool2d, LPPool3d = dim_variants(
    _LPPoolNd, "LPPool{n}d", "Power-average pooling over (N, C, {spatial}) or (C, {spatial}).", __name__)


class _FractionalMaxPoolNd(Module):
    """The max over kernel windows at pseudo-random starts (Graham's fractional max pooling) down to
    ``output_size``, or to int(size * ``output_ratio``) with each ratio in (0, 1). ``_random_samples``
    (a buffer) fixes the starts; else each call draws them from minitensor's generator."""
    _dims = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        n = self._dims
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{n}d requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        pool = F.fractional_max_pool2d if self._dims == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Over (N, C, H, W) or (C, H, W); ``_random_samples`` is (N, C, 2): columns, then rows."""
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Over (N, C, D, H, W) or (C, D, H, W); ``_random_samples`` is (N, C, 3): depth, rows, columns."""
    _dims = 3
