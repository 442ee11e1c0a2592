"""``TensorStorageMethods``: how a ``Tensor`` lies in memory (``stride``, ``storage_offset``, ``data_ptr``,
``untyped_storage`` / ``storage``, ``nbytes``, ``itemsize``), the conjugate transposes ``H`` / ``mH`` /
``adjoint`` (real dtypes only: the transposes), ``index_put`` / ``index_put_``, ``signbit`` and the queries
``is_signed``, ``is_nonzero``, ``is_same_size``, ``get_device``, ``ndimension``, ``retains_grad``. ``_F`` is
bound by ``tensor.py``.

Strides and the storage offset count elements, as PyTorch's, from the backend array's byte strides and the
distance to the start of the array it views (its outermost ``base``).
"""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .backends.generic.sparse import SparseCOO

if TYPE_CHECKING:
    from .device import device
    from .tensor import Tensor

_F: Any = None  # minitensor.functional, bound by tensor.py


class TensorStorageMethods:
    __slots__ = ()
    array: Any
    _device: "device"

    def _strided(self, what: str) -> Any:
        if type(self.array) is SparseCOO:
            raise RuntimeError(f"{what}: sparse tensors do not have strides or a storage")
        return self.array

    def stride(self, dim: int | None = None) -> Any:
        """The step in elements between neighbours along each dim (a tuple), or along ``dim`` (an int)."""
        a = self._strided("stride")
        strides = tuple(s // a.itemsize for s in a.strides)
        if dim is None:
            return strides
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return strides[_F._util.norm_dim(dim, a.ndim)]

    def storage_offset(self) -> int:
        """Elements from the start of the memory this tensor views to its first element."""
        a = self._strided("storage_offset")
        return self._device.backend.storage_offset(a) // a.itemsize

    def untyped_storage(self) -> Any:
        """The bytes this tensor's memory lies in (``minitensor/storage.py``)."""
        from .storage import UntypedStorage
        self._strided("untyped_storage")
        return UntypedStorage(self)

    def storage(self) -> Any:
        """PyTorch's deprecated typed storage: the memory as elements of this tensor's dtype."""
        from .storage import typed_storage
        self._strided("storage")
        return typed_storage(self)

    def data_ptr(self) -> int:
        """The address of the first element."""
        return self._device.backend.data_ptr(self._strided("data_ptr"))

    @property
    def nbytes(self) -> int:
        """numel * element_size (an expanded tensor counts every element it shows)."""
        return int(self.array.size) * self.array.itemsize

    @property
    def itemsize(self) -> int:
        return int(self.array.itemsize)

    @property
    def H(self) -> "Tensor":
        """The conjugate transpose of a matrix (the transpose: minitensor has no complex dtypes)."""
        nd = self.array.ndim
        if nd == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                          stacklevel=2)
            return self  # type: ignore[return-value]
        if nd != 2:
            hint = ". For batches of matrices, consider using tensor.mH" if nd > 2 else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor{hint}")
        return _F.transpose(self, 0, 1)

    @property
    def mH(self) -> "Tensor":
        return self._last_two_swapped("tensor.mH")

    def adjoint(self) -> "Tensor":
        if self.array.ndim == 0:  # PyTorch: deprecated, the tensor itself (as H)
            warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
            return self  # type: ignore[return-value]
        return self._last_two_swapped("tensor.adjoint()")

    def _last_two_swapped(self, what: str) -> "Tensor":
        nd = self.array.ndim
        if nd < 2:
            raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got {nd}-D tensor.")
        return _F.transpose(self, -2, -1)

    def index_put(self, indices: Any, values: "Tensor", accumulate: bool = False) -> "Tensor":
        return _F.index_put(self, indices, values, accumulate)

    def index_put_(self, indices: Any, values: "Tensor", accumulate: bool = False) -> "Tensor":
        return _F.inplace(self, _F.index_put, indices, values, accumulate)

    def signbit(self) -> "Tensor":
        return _F.signbit(self)

    # ------------------------------------------------------------------ queries (also minitensor.<name>)
    def is_signed(self) -> bool:
        """False for uint8 and bool, True for the other dtypes."""
        return self.array.dtype.kind not in "ub"

    def is_nonzero(self) -> bool:
        """The one element as a bool; PyTorch's errors for none or several."""
        n = self.array.size
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                               "is ambiguous")
        return bool(self.array.reshape(()).item() != 0)

    def is_same_size(self, other: "Tensor") -> bool:
        return tuple(self.array.shape) == tuple(other.array.shape)

    def get_device(self) -> int:
        """The CUDA device's index, -1 on the CPU."""
        return -1 if self._device.type == "cpu" else self._device.index or 0

    def ndimension(self) -> int:
        return int(self.array.ndim)

    @property
    def retains_grad(self) -> bool:
        """True after ``retain_grad()`` on this non-leaf tensor."""
        retained = getattr(getattr(self, "grad_fn", None), "_retained", None)
        return retained is not None and retained() is self
