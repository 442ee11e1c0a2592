"""PyTorch's ``torch.sparse`` names: ``mm`` (sparse @ dense) and ``sum`` over sparse COO tensors
(``minitensor/functional/sparse.py``)."""
from __future__ import annotations

from .functional.sparse import sparse_sum as sum
from .functional.sparse_products import sparse_mm as mm

__all__ = ["mm", "sum"]
