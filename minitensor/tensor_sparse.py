"""``TensorSparseMethods``: the sparse COO methods of ``Tensor`` (PyTorch's ``to_sparse``, ``to_dense``,
``coalesce``, ``indices``, ``values``...), each a call into ``minitensor.functional.sparse``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .backends.generic.sparse import SparseCOO

if TYPE_CHECKING:
    from .tensor import Tensor

_S: Any = None  # minitensor.functional.sparse, bound by tensor.py


class TensorSparseMethods:
    """Layout queries and conversions; a dense tensor is ``strided``, a sparse one ``sparse_coo``."""

    __slots__ = ()
    array: Any

    @property
    def is_sparse(self) -> bool:
        return type(self.array) is SparseCOO

    @property
    def layout(self) -> Any:
        return _S.sparse_coo if type(self.array) is SparseCOO else _S.strided

    def to_sparse(self, sparse_dim: int | None = None, *, layout: Any = None, blocksize: Any = None,
                  dense_dim: int | None = None) -> "Tensor":
        if (layout is not None and layout is not _S.sparse_coo) or blocksize is not None or dense_dim is not None:
            raise NotImplementedError("to_sparse: minitensor has the sparse COO layout only (layout=None or "
                                      "minitensor.sparse_coo, no blocksize or dense_dim)")
        return _S.to_sparse(self, sparse_dim)

    def to_sparse_coo(self) -> "Tensor":
        return _S.to_sparse(self)

    def to_sparse_csr(self, dense_dim: int | None = None) -> "Tensor":
        raise _S.unsupported("to_sparse_csr", "the CSR layout")

    def to_sparse_csc(self, dense_dim: int | None = None) -> "Tensor":
        raise _S.unsupported("to_sparse_csc", "the CSC layout")

    def to_sparse_bsr(self, blocksize: Any, dense_dim: int | None = None) -> "Tensor":
        raise _S.unsupported("to_sparse_bsr", "the BSR layout")

    def to_sparse_bsc(self, blocksize: Any, dense_dim: int | None = None) -> "Tensor":
        raise _S.unsupported("to_sparse_bsc", "the BSC layout")

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> "Tensor":
        out = _S.to_dense(self)
        return out if dtype is None else out.to(dtype)

    def coalesce(self) -> "Tensor":
        return _S.coalesce(self)

    def is_coalesced(self) -> bool:
        return bool(_S._require_sparse(self, "is_coalesced").coalesced)

    def indices(self) -> "Tensor":
        return _S.indices(self)

    def _indices(self) -> "Tensor":
        return _S.indices(self, check_coalesced=False)

    def values(self) -> "Tensor":
        return _S.values(self)

    def _values(self) -> "Tensor":
        return _S.values(self, raw=True)

    def _nnz(self) -> int:
        return _S.nnz(self)

    def sparse_dim(self) -> int:
        return self.array.sparse_dim if type(self.array) is SparseCOO else 0

    def dense_dim(self) -> int:
        a = self.array
        return a.values.ndim - 1 if type(a) is SparseCOO else a.ndim
