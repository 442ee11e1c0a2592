"""PyTorch's ``torch.sparse`` names over sparse COO tensors: ``mm`` (sparse @ dense, dense @ sparse,
sparse @ sparse) and ``sum`` (``minitensor/functional/sparse.py``, ``sparse_products.py``). The rest of
``torch.sparse`` raises NotImplementedError naming it (docs/differences.md)."""
from __future__ import annotations

from typing import Any

from .functional.sparse import sparse_sum as sum, unsupported
from .functional.sparse_products import sparse_mm as mm

__all__ = ["mm", "sum", "softmax", "log_softmax", "addmm", "sampled_addmm"]


def softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    raise unsupported("sparse.softmax", "the softmax over a sparse tensor's specified entries")


def log_softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    raise unsupported("sparse.log_softmax", "the log-softmax over a sparse tensor's specified entries")


def addmm(mat: Any, mat1: Any, mat2: Any, *, beta: float = 1.0, alpha: float = 1.0) -> Any:
    raise unsupported("sparse.addmm", "sparse.addmm (write mat * beta + alpha * sparse.mm(mat1, mat2))")


def sampled_addmm(input: Any, mat1: Any, mat2: Any, *, beta: float = 1.0, alpha: float = 1.0, out: Any = None) -> Any:
    raise unsupported("sparse.sampled_addmm", "sparse.sampled_addmm (a CSR input)")
