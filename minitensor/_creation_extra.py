"""More of PyTorch's creation functions: ``logspace``, the deprecated inclusive ``range``, ``scalar_tensor``,
``empty_strided``, ``asarray`` and ``frombuffer`` (sharing memory as PyTorch's), and the signal windows
(``hann_window``...; each is small, so it is made in float64 on the host and cast, as NumPy's windows)."""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Sequence

import numpy as np

from . import dtypes as _dt
from .creation import _finish, _infer_numpy, _leaf, arange, from_numpy, linspace, tensor
from .device import as_device
from .tensor import Tensor

__all__ = ["asarray", "bartlett_window", "blackman_window", "empty_strided", "frombuffer", "hamming_window",
           "hann_window", "kaiser_window", "logspace", "range", "scalar_tensor"]



def _float_dtype(dtype: Any) -> _dt.dtype:
    return _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed in float64 (integer dtypes truncate the powers)."""
    exponents = linspace(start, end, steps, dtype=_dt.float64, device=device)
    return _leaf((base ** exponents).to(_float_dtype(dtype)).array, exponents._device, requires_grad)


def range(start: float, end: float, step: float = 1, *, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated in PyTorch (the same warning): ``start, start + step, ...`` up to and including ``end``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    points = arange(count, dtype=_dt.float64, device=device) * step + start
    return _leaf(points.to(_float_dtype(dtype)).array, points._device, requires_grad)


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


# ------------------------------------------------------------------------------------------- windows
def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any, requires_grad: bool,
            values: Any) -> Tensor:
    """The checks and the periodic rule shared by the windows: ``values(n, N)`` gives the symmetric window of
    ``N`` points at float64 positions ``n``; a periodic window is the first ``window_length`` of ``N + 1``."""
    dt = _float_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    window_length = operator.index(window_length)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        host = np.ones(window_length)
    else:
        points = window_length + 1 if periodic else window_length
        host = values(np.arange(window_length, dtype=np.float64), points)
    return tensor(host, dtype=dt, device=device, requires_grad=requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / (N - 1)))


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / (N - 1))``."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / (N - 1)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * np.pi * n / (N - 1)) + 0.08 * np.cos(4 * np.pi * n / (N - 1)))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    """``1 - |2n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)``."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(1 - (2 * n / (N - 1) - 1) ** 2)) / np.i0(beta))


