"""The pickler of PyTorch-layout checkpoints: ``data.pkl`` as ``torch.save`` writes it, PyTorch not required.

A tensor pickles as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
OrderedDict())`` and a Parameter as ``torch._utils._rebuild_parameter(tensor, requires_grad,
OrderedDict())``; the storage is a persistent id ``("storage", torch.FloatStorage, key, location, numel)``
whose elements go to ``data/<key>``. dtypes and devices pickle as ``torch.float32`` and
``torch.device("cuda:0")``. These are the names PyTorch's ``weights_only`` unpickler accepts. The
pickle module names them (``GLOBAL torch._utils ...``) without importing torch: ``_Global`` writes them.

Tensors that view one contiguous NumPy buffer (slices, transposes, tied weights) share one storage.
"""
from __future__ import annotations

import collections
import pickle
from collections.abc import Callable
from typing import IO, Any, ClassVar

import numpy as np

from ..device import device
from ..dtypes import dtype, from_numpy_dtype
from ..nn import Parameter
from ..size import Size
from ..tensor import Tensor
from .unpickler import STORAGE_NAMES


class _Global:
    """A reference to ``module.name``, pickled as the GLOBAL opcode; one object per name (so pickle's memo
    writes each name once)."""

    _made: dict[tuple[str, str], "_Global"] = {}

    def __new__(cls, module: str, name: str) -> "_Global":
        key = (module, name)
        if key not in cls._made:
            g = cls._made[key] = object.__new__(cls)
            g.module, g.name = key
        return cls._made[key]

    module: str
    name: str

    def __call__(self, *args: Any) -> Any:  # pickle requires reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is a name for pickles only")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_DEVICE = _Global("torch", "device")
_SIZE = _Global("torch", "Size")


class StorageRecord:
    """One storage to write: its flat array (C-contiguous, its own element type) and saved location."""

    def __init__(self, key: str, array: np.ndarray, location: str) -> None:
        self.key, self.array, self.location = key, array, location


class TorchPickler(pickle._Pickler):
    """Pickles ``obj`` as ``torch.save`` does; the storages it meets collect in ``storages`` by key."""

    dispatch: ClassVar[dict[type, Callable[..., None]]] = dict(pickle._Pickler.dispatch)

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[str, StorageRecord] = {}
        self._by_buffer: dict[int, tuple[np.ndarray, StorageRecord]] = {}

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, StorageRecord):
            kind = _Global("torch", STORAGE_NAMES[from_numpy_dtype(obj.array.dtype)])
            return ("storage", kind, obj.key, obj.location, obj.array.size)
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Parameter):
            return _REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, Tensor):
            return (_REBUILD_TENSOR, (*self._view(obj), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, device):
            return _DEVICE, (str(obj),)
        if isinstance(obj, Size):
            return _SIZE, (tuple(obj),)
        return NotImplemented

    def _save_global(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))  # type: ignore[attr-defined]
        self.memoize(obj)  # type: ignore[attr-defined]

    def _save_dtype(self, obj: dtype) -> None:
        self.save(_Global("torch", obj.name))  # type: ignore[attr-defined]

    dispatch[_Global] = _save_global
    dispatch[dtype] = _save_dtype

    def _view(self, t: Tensor) -> tuple[StorageRecord, int, tuple[int, ...], tuple[int, ...]]:
        """``t``'s storage record, element offset, size and stride. A CPU tensor viewing a C-contiguous
        buffer of its own dtype (a slice, a transpose) shares that buffer's record; anything else (CUDA,
        negative strides, a dtype view) is copied to a storage of its own."""
        a = t.detach().numpy(force=True)
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        item = a.itemsize
        offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if root.dtype != a.dtype or not root.flags.c_contiguous or offset % item \
                or any(s < 0 or s % item for s in a.strides):
            a = root = np.ascontiguousarray(a)  # a new array: its own storage, its own strides
            offset = 0
        seen = self._by_buffer.get(id(root))
        if seen is None:
            record = StorageRecord(str(len(self.storages)), root.reshape(-1), str(t.device))
            self.storages[record.key] = record
            self._by_buffer[id(root)] = seen = (root, record)  # holding root keeps its id unique
        return seen[1], offset // item, tuple(a.shape), tuple(s // item for s in a.strides)
