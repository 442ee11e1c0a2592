"""Unpicklers for PyTorch-layout checkpoints (``data.pkl``), PyTorch not required.

The pickle names PyTorch's functions (``torch._utils._rebuild_tensor_v2``), storage types
(``torch.FloatStorage``) and dtypes (``torch.float32``); ``TORCH_NAMES`` maps each to minitensor's own
replacement, so a checkpoint written by ``torch.save`` rebuilds minitensor tensors. Tensors are strided
views of their storage: tensors that shared a storage share memory again.

``FullUnpickler`` (``weights_only=False``) also imports any other class, as ``pickle`` does;
weights_unpickler.py holds the restricted one that ``weights_only=True`` uses.
"""
from __future__ import annotations

import _compat_pickle
import codecs
import collections
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes
from ..creation import from_numpy
from ..device import device
from ..nn import Parameter
from ..size import Size
from ..tensor import Tensor
from .archive import MAX_DIMS
from .devices import MapLocation, place

# PyTorch's storage class names for minitensor's dtypes
STORAGE_NAMES = {dtypes.float32: "FloatStorage", dtypes.float64: "DoubleStorage", dtypes.float16: "HalfStorage",
                 dtypes.bfloat16: "BFloat16Storage",
                 dtypes.int64: "LongStorage", dtypes.int32: "IntStorage", dtypes.int16: "ShortStorage",
                 dtypes.int8: "CharStorage", dtypes.uint8: "ByteStorage", dtypes.bool: "BoolStorage"}


class StorageType:
    """What ``torch.FloatStorage`` etc. resolve to: the element type of a storage in the file."""

    def __init__(self, name: str, file_dtype: Any) -> None:
        self.name, self.file_dtype = name, np.dtype(file_dtype)

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def decode(self, raw: np.ndarray, big_endian: bool) -> np.ndarray:
        """The storage's elements from the file's array of ``file_dtype`` (byte-swapped if written so)."""
        if big_endian and raw.dtype.itemsize > 1:
            raw.byteswap(inplace=True)
        return raw


class Storage:
    """One storage of the file: its elements (a flat CPU array), saved location and where to place it."""

    def __init__(self, array: np.ndarray, location: str, map_location: MapLocation, key: str = "?") -> None:
        self.array, self.location, self.map_location, self.key = array, location, map_location, key


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(type(v) is int and v >= 0 for v in value):
        raise pickle.UnpicklingError(f"tensor {what} must be a tuple of non-negative ints, got {value!r:.80}")
    return tuple(value)


def rebuild_tensor_v2(storage: Storage, storage_offset: int, size: Any, stride: Any, requires_grad: bool,
                      backward_hooks: Any, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: the view ``size``/``stride`` (in elements) of ``storage`` from
    ``storage_offset``, checked to lie inside it. ``backward_hooks`` and ``metadata`` are not restored
    (PyTorch saves empty ones)."""
    if not isinstance(storage, Storage):
        raise pickle.UnpicklingError(f"a tensor's storage must be a storage record, got {type(storage).__name__}")
    shape, steps = _ints(size, "size"), _ints(stride, "stride")
    (offset,) = _ints((storage_offset,), "offset")
    if len(shape) != len(steps) or type(requires_grad) is not bool:
        raise pickle.UnpicklingError(f"tensor of size {shape} has stride {steps} and "
                                     f"requires_grad={requires_grad!r}")
    if len(shape) > MAX_DIMS:  # PyTorch has no limit; NumPy's own error would name neither file nor record
        raise pickle.UnpicklingError(f"the tensor of storage {storage.key!r} has {len(shape)} dimensions; "
                                     f"minitensor's arrays have at most {MAX_DIMS}")
    flat = storage.array
    last = offset + sum((n - 1) * s for n, s in zip(shape, steps))
    if math.prod(shape) and last >= flat.size:
        raise pickle.UnpicklingError(f"tensor of size {shape}, stride {steps} and offset {offset} reaches "
                                     f"element {last} of a storage of {flat.size}")
    try:
        view = np.lib.stride_tricks.as_strided(flat[offset:] if flat.size else flat, shape,
                                               tuple(s * flat.itemsize for s in steps))
    except ValueError as e:  # more elements than an array may have (zero strides over a huge size)
        raise pickle.UnpicklingError(f"the tensor of storage {storage.key!r} (size {str(shape)[:80]}): {e}") from None
    t = place(from_numpy(view), storage.location, storage.map_location)
    return t.requires_grad_(True) if requires_grad else t


def rebuild_tensor(storage: Storage, storage_offset: int, size: Any, stride: Any) -> Tensor:
    """``torch._utils._rebuild_tensor`` (older files)."""
    return rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any = None) -> Parameter:
    """``torch._utils._rebuild_parameter[_with_state]``: a Parameter sharing ``data``'s memory."""
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise pickle.UnpicklingError(f"a Parameter needs a tensor and a bool, got {type(data).__name__} and "
                                     f"{requires_grad!r}")
    if state:
        raise pickle.UnpicklingError("Parameters with Python attributes (_rebuild_parameter_with_state "
                                     "state) are not supported")
    return Parameter(data.detach(), requires_grad)


def _torch_device(kind: str, index: int | None = None) -> device:
    return device(kind, index)


TORCH_NAMES: dict[str, Any] = {
    "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter,
    "torch.device": _torch_device,
    "torch.Size": Size,
    **{f"torch.{name}": StorageType(name, d.np) for d, name in STORAGE_NAMES.items()},
    **{f"torch.{d.name}": d for d in STORAGE_NAMES},
}
SAFE_NAMES: dict[str, Any] = {
    **TORCH_NAMES,
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "_codecs.encode": codecs.encode,  # bytes, as protocol 2 pickles them
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
}
class Resolver:
    """What both unpicklers share: storages from ``persistent_load``, PyTorch's names from ``find_class``;
    ``storage(kind, key, location, numel)`` returns the storage of ``data/<key>``."""

    def __init__(self, file: Any, storage: Callable[[StorageType, str, str, int], Storage]) -> None:
        super().__init__(file)  # type: ignore[call-arg]  # the pickle.Unpickler that follows in the MRO
        self._storage = storage
        self._loaded: dict[str, Storage] = {}

    def persistent_load(self, pid: Any) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r:.80}: only storages are supported")
        _, kind, key, location, numel = pid
        if not (isinstance(kind, StorageType) and isinstance(key, str) and isinstance(location, str)
                and type(numel) is int and numel >= 0):
            raise pickle.UnpicklingError(f"malformed storage record {pid!r:.120}")
        if key not in self._loaded:
            self._loaded[key] = self._storage(kind, key, location, numel)
        return self._loaded[key]

    def find_class(self, module: str, name: str) -> Any:
        module, name = _py3_name(module, name)
        full = f"{module}.{name}"
        if full in TORCH_NAMES:
            return TORCH_NAMES[full]
        if module == "torch" and name.endswith("Storage"):
            raise pickle.UnpicklingError(
                f"the checkpoint holds a {full}, whose dtype minitensor does not have (it has "
                f"{', '.join(d.name for d in STORAGE_NAMES)})")
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(
                f"the checkpoint needs PyTorch's {full}, which minitensor cannot rebuild (a whole PyTorch "
                f"model or a tensor subclass); save and load its state_dict() instead")
        return self.other_global(module, name, full)

    def other_global(self, module: str, name: str, full: str) -> Any:
        return super().find_class(module, name)  # type: ignore[misc]  # the pickle unpickler's


class FullUnpickler(Resolver, pickle.Unpickler):
    """``weights_only=False``: any other global is imported, as ``pickle`` does (trusted files only)."""


def _py3_name(module: str, name: str) -> tuple[str, str]:
    """Python 2 names that protocol 2 pickles use (``__builtin__.set``), as Python 3 spells them."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name
