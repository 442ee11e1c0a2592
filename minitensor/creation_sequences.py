"""Values spaced by a formula, made on the host in float64 and cast: ``logspace``, the deprecated inclusive
``range``, and the signal windows (``hann_window``...: small, so computed as NumPy's windows are)."""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from . import dtypes as _dt
from .creation import _leaf, arange, linspace, tensor
from .tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window", "logspace",
           "range"]


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
