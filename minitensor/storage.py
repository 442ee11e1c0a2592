"""``tensor.untyped_storage()`` and the deprecated ``tensor.storage()``: the memory a tensor's elements lie
in, as PyTorch's ``UntypedStorage`` (bytes) and ``TypedStorage`` (elements of the tensor's dtype).

A minitensor tensor is a NumPy or CuPy array; its storage is the outermost array that array views (the one
that owns the memory, ``Backend.storage_offset``'s root), so two tensors share a storage exactly when their
arrays view one root: ``a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()``. A storage here
reads that memory; it cannot be resized (an array's memory is fixed).
"""
from __future__ import annotations

import warnings
from typing import Any, Iterator

import numpy as np

from .dtypes import dtype as _dtype, from_numpy_dtype


def _root(a: Any) -> Any:
    """The outermost array ``a`` views (``a`` itself when it owns its memory)."""
    while isinstance(a.base, type(a)):
        a = a.base
    return a


class UntypedStorage:
    """The bytes of a tensor's memory: ``nbytes()`` (= ``size()`` = ``len``), ``data_ptr()``, ``tolist()``
    (the byte values), ``device``; ``element_size()`` is 1."""

    def __init__(self, tensor: Any) -> None:
        self._root = _root(tensor.array)
        self.device = tensor.device
        self._backend = tensor.device.backend

    def data_ptr(self) -> int:
        return self._backend.data_ptr(self._root)

    def nbytes(self) -> int:
        return int(self._root.nbytes)

    size = nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def _host_bytes(self) -> np.ndarray:
        return np.ascontiguousarray(self._backend.to_numpy(self._root)).reshape(-1).view(np.uint8)

    def tolist(self) -> list[int]:
        return self._host_bytes().tolist()

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_shared(self) -> bool:
        from .multiprocessing import sharing
        return self.device.type == "cuda" or sharing.block_of(self._root) is not None

    def is_pinned(self) -> bool:
        return False

    def untyped(self) -> "UntypedStorage":
        return self

    def resize_(self, size: int) -> Any:
        raise NotImplementedError(f"storage.resize_({size}): minitensor's storages are NumPy / CuPy arrays, whose "
                                  "memory has a fixed size; make a new tensor (minitensor.empty) instead")

    def share_memory_(self) -> Any:
        raise NotImplementedError("storage.share_memory_(): move the tensor instead (tensor.share_memory_()), which "
                                  "rebinds it to shared memory")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage(UntypedStorage):
    """PyTorch's deprecated storage of elements of one dtype (``tensor.storage()``): ``size()`` counts the
    elements, ``storage[i]`` and ``tolist()`` give them as numbers, ``untyped()`` the bytes."""

    def __init__(self, tensor: Any) -> None:
        super().__init__(tensor)
        self.dtype: _dtype = from_numpy_dtype(tensor.array.dtype)
        self._itemsize = int(tensor.array.itemsize)

    def size(self) -> int:
        return self.nbytes() // self._itemsize

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self._itemsize

    def _elements(self) -> np.ndarray:
        return self._host_bytes().view(self._root.dtype)

    def tolist(self) -> list[Any]:
        return self._elements().tolist()

    def __getitem__(self, index: Any) -> Any:
        values = self._elements()[index]
        return values.tolist()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    def untyped(self) -> UntypedStorage:
        untyped = UntypedStorage.__new__(UntypedStorage)
        untyped.__dict__.update(_root=self._root, device=self.device, _backend=self._backend)
        return untyped

    @property
    def _untyped_storage(self) -> UntypedStorage:
        return self.untyped()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size()}, dtype={self.dtype}, device={self.device})"


def typed_storage(tensor: Any) -> TypedStorage:
    """``tensor.storage()``, with PyTorch's deprecation warning."""
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                  "only storage class. This should only matter to you if you are using storages directly.  To "
                  "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                  UserWarning, stacklevel=3)
    return TypedStorage(tensor)
