"""Copies across dtypes and devices, differentiable as in PyTorch."""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from .. import memory_formats as _memory_formats
from ..autograd.function import ArrayFunction
from ..device import device
from ..tensor import Tensor, _wrap
from ..backends.base import Backend
from ..backends.generic.sparse import SparseCOO
from ._util import gradient_unchanged

__all__ = ["to_dtype", "view_dtype", "to_device", "clone", "contiguous"]


class ToDtype(ArrayFunction):
    """A cast (of a sparse array: its values); the gradient is cast back (the engine casts to the input's
    dtype)."""
    torch_name = "ToCopyBackward0"  # PyTorch's grad_fn name
    backward = staticmethod(gradient_unchanged)
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, np_dtype: Any) -> Any:
        if type(x) is SparseCOO:
            return x.with_values(B.astype(x.values, np_dtype))
        return B.astype(x, np_dtype)


def _transfer(a: Any, source: Backend, target: Backend) -> Any:
    """``a`` copied from ``source`` to ``target`` through host memory (a sparse array: both of its arrays).
    Under create_graph the gradient is a facade and ``target`` the recording backend: a recorded copy."""
    if getattr(target, "recording", False):
        return type(a)(a.t.to(target.device))  # type: ignore[attr-defined]
    if type(a) is SparseCOO:
        return a.map(lambda part: target.asarray(source.to_numpy(part)))
    return target.asarray(source.to_numpy(a))


class ToDevice(ArrayFunction):
    """A copy to another device through host memory; the gradient makes the way back."""
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, target: device) -> Any:
        ctx.out_device, ctx.source = target, B
        return _transfer(x, B, target.backend)

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return _transfer(gy, ctx.out_device.backend, B), None


class Clone(ArrayFunction):
    """A copy in the source's layout, C-contiguous (``contiguous=True``) or with the given dense ``strides``
    (``memory_formats.clone``); the gradient passes through."""
    backward = staticmethod(gradient_unchanged)
    accepts_sparse = True

    @staticmethod
    def forward(ctx: Any, B: Backend, x: Any, contiguous: bool = False, strides: Any = None) -> Any:
        if type(x) is SparseCOO:
            return x.map(B.copy)
        if strides is not None:
            out = _memory_formats.allocate(B, x.shape, strides, x.dtype)
            B.copy_into(out, x)
            return out
        return B.ascontiguous(x) if contiguous else B.copy(x)


def to_dtype(input: Tensor, dtype: Any) -> Tensor:
    dt = _dt.as_dtype(dtype)
    if dt.np == input.array.dtype:
        return input
    if input._requires_grad and not dt.is_floating_point:
        return _wrap(input._device.backend.astype(input.array, dt.np), input._device)
    return ToDtype.apply(input, dt.np)


def view_dtype(input: Tensor, dtype: Any) -> Tensor:
    """The same bytes read as ``dtype``: a view without gradient (PyTorch's ``view(dtype)``). Where the
    item sizes differ by a ratio r, the last dim (stride 1) grows r-fold, or shrinks r-fold when it and the
    other strides divide by r; a 0-d tensor cannot change item size."""
    dt, a = _dt.as_dtype(dtype), input.array
    old, new = a.dtype.itemsize, dt.itemsize
    if old != new:
        what = f"{input.dtype} as {dt} (different element sizes)"
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {what}")
        if a.strides[-1] != old:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {what}, but got {a.strides[-1] // old}")
        r = new // old
        if new > old and a.shape[-1] % r:
            raise RuntimeError(f"self.size(-1) must be divisible by {r} to view {what}, but got {a.shape[-1]}")
        for i, st in enumerate(a.strides[:-1]):
            if new > old and (st // old) % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r} to view {what}, but got "
                                   f"{st // old}")
    return _wrap(a.view(dt.np), input._device)


def to_device(input: Tensor, target: Any) -> Tensor:
    target = device(target)
    if target is input._device:
        return input
    target.backend  # raises the backend's own "why unavailable" error before any copy
    return ToDevice.apply(input, target)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy (differentiable); ``memory_format`` (default ``preserve_format``) as ``Tensor.clone``'s."""
    if memory_format is None or type(input.array) is SparseCOO:
        return Clone.apply(input)
    return _memory_formats.clone(input, memory_format)


def contiguous(input: Tensor) -> Tensor:
    """A C-contiguous copy of ``input`` (differentiable); ``Tensor.contiguous`` skips the copy when
    ``input`` already is contiguous."""
    return Clone.apply(input, contiguous=True)
