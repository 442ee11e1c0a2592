"""Lazy modules: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d``,
``LazyInstanceNorm1d/2d/3d``.

Their weights start as ``UninitializedParameter`` (and BatchNorm's running statistics as
``UninitializedBuffer``); the first forward reads the input's feature / channel size, materializes them
with the usual init, and the module becomes the plain class (``cls_to_become``: a ``LazyLinear`` is then a
``Linear``), as PyTorch's ``LazyModuleMixin``. A state dict of an initialized module loads into a lazy one
(its parameters take the saved shapes); a lazy module's state dict holds the uninitialized parameters.
"""
from __future__ import annotations

import itertools
from typing import Any, Mapping

from ... import dtypes as _dt
from ...autograd import no_grad
from ...creation import tensor
from ...tensor import Tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Shape inference on the first call: a forward pre-hook runs ``initialize_parameters(*args)``, checks that
    nothing is left uninitialized, removes itself and switches the class to ``cls_to_become``."""

    cls_to_become: type | None = None
    _parameters: dict[str, Any]
    _buffers: dict[str, Any]
    _non_persistent_buffers_set: set[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)  # type: ignore[attr-defined]

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) still has no shape."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module: Any, args: tuple) -> None:
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """As Module's, but an uninitialized entry is saved as itself (it has no data to detach)."""
        entries = itertools.chain(self._parameters.items(), ((k, v) for k, v in self._buffers.items()
                                                             if k not in self._non_persistent_buffers_set))
        for name, t in entries:
            if t is not None:
                destination[prefix + name] = t if keep_vars or is_lazy(t) else t.detach()

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, *args: Any) -> None:
        """Uninitialized entries first take the shapes of the initialized tensors being loaded."""
        for name, t in itertools.chain(self._parameters.items(), self._buffers.items()):
            value = state_dict.get(prefix + name)
            if is_lazy(t) and isinstance(value, Tensor) and not is_lazy(value):
                with no_grad():
                    t.materialize(value.shape)
        super()._load_from_state_dict(state_dict, prefix, *args)  # type: ignore[misc]


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)  # no bias yet: it would be replaced at once
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # loaded from a state dict: the weight says what the input must be
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` from dim 1 of a batched input (dim 0 of an unbatched one)."""

    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple[int, ...]
    _dims: int
    weight: Any
    bias: Any

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        self.in_channels = input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        pair = (self.in_channels, self.out_channels // self.groups) if self.transposed else \
            (self.out_channels, self.in_channels // self.groups)
        with no_grad():
            self.weight.materialize((*pair, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


def _lazy(mixin: type, base: type) -> Any:
    """``Lazy<base>``: ``mixin``'s constructor (``base``'s arguments but ``in_channels``), ``base`` after."""
    name = "Lazy" + base.__name__
    return type(name, (mixin, base), {"cls_to_become": base, "__module__": __name__, "__qualname__": name,
                                      "__doc__": f"``{base.__name__}`` whose ``in_channels`` (``num_features``) is "
                                                 f"read from the first input."})


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy(_LazyConv, c) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy(_LazyConvTranspose, c) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))


class _LazyNormMixin(LazyModuleMixin):
    """``num_features`` from dim 1 of the first input; the affine pair and running statistics wait for it."""

    num_features: int
    affine: bool
    track_running_stats: bool

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dt.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, name)
                if t is not None:
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    """``BatchNorm1d`` whose ``num_features`` is dim 1 of the first input."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    """``BatchNorm2d`` whose ``num_features`` is dim 1 of the first input."""
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormMixin, BatchNorm3d):
    """``BatchNorm3d`` whose ``num_features`` is dim 1 of the first input."""
    cls_to_become = BatchNorm3d


# PyTorch's lazy instance norms take the lazy norms' defaults (affine and track_running_stats True), not
# InstanceNorm's (both False)
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy(_LazyNormMixin, c) for c in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))
