"""PyTorch's legacy tensor types: ``FloatTensor``, ``LongTensor``... (callable, and ``isinstance`` checks
dtype and device as PyTorch's do), ``Tensor(*sizes)`` / ``Tensor(data)``, and ``Tensor.type()``'s names."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import dtypes as _dt
from .creation import empty, tensor
from .device import device as _device, set_type_device
from .tensor import Tensor


def legacy_new(args: tuple, dtype: _dt.dtype, device: Any = None) -> Tensor:
    """``torch.Tensor(...)`` and ``torch.FloatTensor(...)``: integer sizes give an uninitialised tensor, one
    sequence, array or tensor a copy of it, nothing an empty tensor of shape (0,)."""
    if not args:
        return empty(0, dtype=dtype, device=device)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in args):
        return empty(*args, dtype=dtype, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (int, float, bool, np.generic)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=dtype, device=device)
    raise TypeError(f"new(): expected integer sizes or one sequence of data, got "
                    f"({', '.join(type(a).__name__ for a in args)})")


# PyTorch's legacy names, by dtype.
LEGACY_NAMES = {_dt.float32: "FloatTensor", _dt.float64: "DoubleTensor", _dt.float16: "HalfTensor",
                _dt.bfloat16: "BFloat16Tensor",
                _dt.int64: "LongTensor", _dt.int32: "IntTensor", _dt.int16: "ShortTensor",
                _dt.int8: "CharTensor", _dt.uint8: "ByteTensor", _dt.bool: "BoolTensor"}


class LegacyTensorType:
    """``FloatTensor``, ``LongTensor``... and ``cuda.FloatTensor``...: calling one makes a tensor of its dtype on
    its device type as ``Tensor(...)`` does (sizes or data; a CUDA one without a GPU raises the device's
    error); ``isinstance(t, FloatTensor)`` holds for a float32 CPU tensor, as in PyTorch."""

    def __init__(self, dtype: _dt.dtype, device_type: str = "cpu") -> None:
        self.dtype, self.device_type = dtype, device_type
        self.__name__ = LEGACY_NAMES[dtype]

    def __call__(self, *args: Any, device: Any = None) -> Tensor:
        return legacy_new(args, self.dtype, self.device_type if device is None else device)

    def __instancecheck__(self, obj: Any) -> bool:
        return (isinstance(obj, Tensor) and obj.array.dtype == self.dtype.np
                and obj._device.type == self.device_type)

    def __repr__(self) -> str:
        where = "" if self.device_type == "cpu" else self.device_type + "."
        return f"<class 'minitensor.{where}{self.__name__}'>"


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor,
 BoolTensor) = map(LegacyTensorType, LEGACY_NAMES)
# torch.cuda.FloatTensor...: the GAN zoo's ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``
CUDA_TYPES = {name: LegacyTensorType(dt, "cuda") for dt, name in LEGACY_NAMES.items()}
LEGACY_TYPES = {name: globals()[name] for name in LEGACY_NAMES.values()}


def legacy_type_name(t: Tensor) -> str:
    """``t.type()``: 'torch.FloatTensor', 'torch.cuda.LongTensor'... (PyTorch's strings, kept verbatim so
    code comparing them runs unchanged)."""
    where = "torch." if t._device.type == "cpu" else f"torch.{t._device.type}."
    return where + LEGACY_NAMES[t.dtype]


def legacy_target(kind: Any) -> tuple[_dt.dtype, str | None]:
    """(dtype, device type or None to stay) of ``t.type(kind)``: a dtype keeps the device; a legacy type
    (``FloatTensor``, ``cuda.FloatTensor``) and a name say their device ('torch.DoubleTensor',
    'torch.cuda.DoubleTensor'), as PyTorch."""
    if isinstance(kind, LegacyTensorType):
        return kind.dtype, kind.device_type
    if isinstance(kind, str) and kind.endswith("Tensor"):
        by_name = {name: dt for dt, name in LEGACY_NAMES.items()}
        where, _, short = kind.rpartition(".")
        if short not in by_name or where not in ("torch", "torch.cuda", "minitensor", "minitensor.cuda"):
            raise ValueError(f"invalid type: '{kind}'")
        return by_name[short], "cuda" if where.endswith(".cuda") else "cpu"
    return _dt.as_dtype(kind), None


def set_default_tensor_type(t: Any) -> None:
    """PyTorch's deprecated ``set_default_tensor_type``: a floating legacy type or its name
    ('torch.DoubleTensor', 'torch.cuda.FloatTensor', ``DoubleTensor``) sets the default dtype, and the device
    type factory functions create on (a CUDA type needs a GPU: TypeError otherwise, as PyTorch's)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    if isinstance(t, str):
        where, _, short = t.rpartition(".")
        if where in ("torch.cuda", "minitensor.cuda") and short in CUDA_TYPES:
            t = CUDA_TYPES[short]
        elif where in ("torch", "minitensor") and short in LEGACY_TYPES:
            t = LEGACY_TYPES[short]
        elif where not in ("torch", "torch.cuda", "minitensor", "minitensor.cuda"):
            raise ModuleNotFoundError(f"No module named '{where or t}'")
        else:
            raise AttributeError(f"module '{where}' has no attribute '{short}'")
    if not isinstance(t, LegacyTensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if t.device_type == "cuda":
        from .backends.cuda.runtime import is_available
        if not is_available():
            raise TypeError(f"type torch.cuda.{t.__name__} not available: CUDA is not available here "
                            "(CuPy and a GPU are needed)")
    _dt.set_default_dtype(t.dtype)
    set_type_device(None if t.device_type == "cpu" else _device(t.device_type))
