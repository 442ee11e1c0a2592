"""Tensors from other objects and layouts: ``asarray`` and ``frombuffer`` (sharing memory as PyTorch's),
``empty_strided`` (given element strides) and ``scalar_tensor``."""
from __future__ import annotations

import operator
import warnings
from typing import Any, Sequence

import numpy as np

from . import dtypes as _dt
from .creation import _finish, _infer_numpy, _leaf, empty, from_numpy, tensor
from .creation_sequences import _float_dtype
from .device import as_device, context_device
from .tensor import Tensor

__all__ = ["asarray", "empty_permuted", "empty_strided", "frombuffer", "scalar_tensor"]


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the default float dtype (not the scalar's own type) unless ``dtype`` says."""
    return tensor(s.item() if isinstance(s, Tensor) else s, dtype=_float_dtype(dtype), device=device,
                  requires_grad=requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """Uninitialised memory with the given strides (in elements)."""
    size, stride = tuple(map(operator.index, size)), tuple(map(operator.index, stride))
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, {len(stride)} strides")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: sizes and strides must be non-negative, got {size} and {stride}")
    dev = as_device(device)
    return _leaf(dev.backend.empty_strided(size, stride, _float_dtype(dtype).np), dev, requires_grad)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing its memory (a tensor, a NumPy array, a buffer) when dtype and device allow
    and ``copy`` is not True; ``copy=False`` raises ValueError where that is impossible."""
    if isinstance(obj, Tensor):
        dt = obj.dtype if dtype is None else _dt.as_dtype(dtype)
        device = device if device is not None else context_device()
        dev = obj._device if device is None else as_device(device)
        if copy is False and dt != obj.dtype:
            raise ValueError(f"can't alias tensor with dtype '{obj.dtype}' into dtype '{dt}'.")
        if copy is False and dev != obj._device:
            raise ValueError(f"can't alias tensor from device '{obj._device}' to '{dev}'.")
        out = obj.to(device=dev, dtype=dt, copy=bool(copy))
        return out.requires_grad_(True) if requires_grad else out
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__") or isinstance(obj, memoryview):
        host = np.asarray(obj)  # no copy: shares the memory
        dev = as_device(device)
        if copy is False and ((dtype is not None and _dt.as_dtype(dtype).np != host.dtype) or dev.type != "cpu"):
            raise ValueError("asarray: copy=False, but the array cannot be shared with that dtype and device")
        return _finish(host, dtype, dev, requires_grad, copy=bool(copy))
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} has no memory to share")
    return _finish(_infer_numpy(obj, dtype), dtype, as_device(device), requires_grad, copy=False)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor on the memory of a Python buffer (no copy), as PyTorch's checks and warning."""
    np_dtype = _dt.as_dtype(dtype).np
    view = memoryview(buffer)
    length, size = view.nbytes, np.dtype(np_dtype).itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0 and (length - offset) % size:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                         f"multiple of element size ({size})")
    if count > 0 and count * size > length - offset:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must not "
                         f"be greater than actual buffer length ({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
                      "You may want to copy the buffer to protect its data or make it writable before converting "
                      "it to a tensor.", UserWarning, stacklevel=2)
    t = from_numpy(np.frombuffer(view, dtype=np_dtype, count=count, offset=offset))
    return t.requires_grad_(True) if requires_grad else t


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Uninitialised, of logical shape ``size``, laid out in memory in the dim order ``physical_layout``
    (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is channels-last memory."""
    size, order = tuple(map(operator.index, size)), tuple(map(operator.index, physical_layout))
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(order))):
        raise RuntimeError("Duplicate dim not allowed" if len(set(order)) != len(order) else
                           f"Dimension out of range in physical_layout {list(order)}")
    physical = empty(*[size[d] for d in order], dtype=dtype, device=device)
    logical = physical.permute(*np.argsort(order).tolist()).detach()  # a leaf viewing the physical memory
    return logical.requires_grad_(True) if requires_grad else logical
