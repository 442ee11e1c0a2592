"""``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``."""
from __future__ import annotations

import math
from typing import Any, Sequence

from ...tensor import Tensor
from ...creation import empty
from ...functional.conv import conv_padding
from .. import functional as F, init
from ..parameter import Parameter
from .linear import reset_bias_from_fan_in
from .utils import dim_variants
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(x: int | Sequence[int], n: int) -> tuple[int, ...]:
    if isinstance(x, (tuple, list)):
        if len(x) != n:
            raise ValueError(f"expected an int or {n} ints, got {x!r}")
        return tuple(int(v) for v in x)
    return (int(x),) * n  # type: ignore[arg-type]


class _ConvNd(Module):
    """What the convolutions share: checks, the weight, PyTorch's init and repr; ``_dims`` spatial dims.

    weight: (out_channels, in_channels / groups, *kernel), or (in_channels, out_channels / groups, *kernel)
    when transposed. Init: kaiming_uniform_(a=sqrt(5)) and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    """
    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, transposed: bool, output_padding: Any, groups: int, bias: bool,
                 padding_mode: str, device: Any, dtype: Any) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups:
            raise ValueError(f"out_channels ({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        n = self._dims
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.dilation, self.output_padding = _ntuple(dilation, n), _ntuple(output_padding, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.transposed, self.groups, self.padding_mode = transposed, groups, padding_mode
        self._reversed_padding_repeated_twice = self._padding_for_pad()
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*shape, *self.kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _padding_for_pad(self) -> list[int]:
        """The padding as F.pad takes it, last dim first: (left, right, top, bottom, ...); 'same' puts the odd
        pixel after (``conv_padding`` works it out; the layer raises ValueError at construction, as PyTorch's
        does, where the functional form raises RuntimeError)."""
        if isinstance(self.padding, str) and self.padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string {self.padding!r}, should be one of ['valid', 'same']")
        if self.padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        pads = conv_padding(type(self).__name__, self.padding, self.kernel_size, self.stride, self.dilation)
        return [p for lo_hi in reversed(pads) for p in lo_hi]

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        reset_bias_from_fan_in(self.bias, self.weight)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """Cross-correlation over (N, C_in, *spatial) (or unbatched (C_in, *spatial)) -> (N, C_out, *out), e.g.
    H_out = floor((H + 2 p - d (k - 1) - 1) / s) + 1.

    ``padding`` may be an int, a pair, 'valid' or 'same' (stride 1); ``padding_mode`` 'zeros' pads inside
    the convolution, 'reflect' / 'replicate' / 'circular' pad with ``F.pad`` first.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._dims - 1]
        if self.padding_mode == "zeros":
            return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)
        return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                    self.stride, 0, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTranspose(_ConvNd):
    """The gradient of a convolution with respect to its input, used as an upsampling layer: (N, C_in, *spatial)
    -> (N, C_out, *out), e.g. H_out = (H - 1) s - 2 p + d (k - 1) + output_padding + 1.

    ``forward(input, output_size)`` picks the output_padding that gives ``output_size`` (the stride makes
    several output sizes map to one input size).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not accept padding={padding!r}; give numbers")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        if output_size is None:
            return self.output_padding
        n = self._dims
        output_size = tuple(output_size)[-n:] if len(output_size) in (n + 1, n + 2) else tuple(output_size)
        if len(output_size) != n:
            raise ValueError(f"{type(self).__name__}: output_size must have {n} or {n + 2} elements (got "
                             f"{len(output_size)})")
        min_sizes = [(input.shape[d - n] - 1) * s - 2 * p + dil * (k - 1) + 1 for d, s, p, dil, k in  # type: ignore[operator]
                     zip(range(n), self.stride, self.padding, self.dilation, self.kernel_size)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if not lo <= size <= hi:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {tuple(input.shape[-n:])})")
        return tuple(size - lo for size, lo in zip(output_size, min_sizes))

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._dims - 1]
        return conv(input, self.weight, self.bias, stride=self.stride, padding=self.padding,  # type: ignore[arg-type]
                    output_padding=output_padding, groups=self.groups, dilation=self.dilation)


Conv1d, Conv2d, Conv3d = dim_variants(
    _Conv, "Conv{n}d", "{n}-D cross-correlation over (N, C_in, {spatial}) or (C_in, {spatial}).", __name__)
ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = dim_variants(
    _ConvTranspose, "ConvTranspose{n}d", "The transposed {n}-D convolution over (N, C_in, {spatial}) or "
    "(C_in, {spatial}).", __name__)
