"""The modules installed as ``cupyx``, ``cupyx.scipy``, ``cupyx.scipy.special`` and ``cupyx.scipy.sparse``:
names of the real cupyx, bodies of NumPy / SciPy; the scatters follow ``cupy.<ufunc>.at``'s dtype rules (the same
``_scatter_op`` in CuPy), and pinned host memory is NumPy memory the double remembers as pinned."""
from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import scipy.sparse
import scipy.special

from . import cuda_module, real
from .convert import refuse_host, unwrap, wrap
from .cupy_module import Double
from .functions import module_attr
from .ndarray import ndarray


def _pinned(shape: Any, dtype: Any = float, order: str = "C") -> np.ndarray:
    out = np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
    cuda_module._pinned[id(out)] = out
    return out


def _zeros_pinned(shape: Any, dtype: Any = float, order: str = "C") -> np.ndarray:
    out = _pinned(shape, dtype, order)
    out.fill(0)
    return out


class SparseMatrix:
    """A cupyx sparse matrix over SciPy's: products with device arrays give device arrays."""

    def __init__(self, matrix: Any) -> None:
        self._m = matrix

    def tocsr(self) -> SparseMatrix:
        return SparseMatrix(self._m.tocsr())

    def tocoo(self) -> SparseMatrix:
        return SparseMatrix(self._m.tocoo())

    def sum_duplicates(self) -> None:
        self._m.sum_duplicates()

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, SparseMatrix):  # cuSPARSE's SpGEMM: a sparse matrix
            return SparseMatrix(self._m @ other._m)
        refuse_host(other, "sparse @")
        if not isinstance(other, ndarray):
            return NotImplemented
        return wrap(np.asarray(self._m @ other._a))

    dot = __matmul__

    def __getattr__(self, name: str) -> Any:  # a COO matrix's row, col and data: device arrays
        if name in ("row", "col", "data"):
            return wrap(np.asarray(getattr(self._m, name)))
        raise AttributeError(name)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._m.shape


def coo_matrix(arg1: Any, shape: Any = None, dtype: Any = None, copy: bool = False) -> SparseMatrix:
    refuse_host(arg1, "coo_matrix")
    return SparseMatrix(scipy.sparse.coo_matrix(unwrap(arg1), shape=shape, dtype=dtype, copy=copy))


special = Double("cupyx.scipy.special", real.cupyx_special, scipy.special)
sparse = Double("cupyx.scipy.sparse", real.cupyx_sparse, scipy.sparse, {"coo_matrix": coo_matrix})
scipy_module = ModuleType("cupyx.scipy")
scipy_module.special, scipy_module.sparse = special, sparse  # type: ignore[attr-defined]
cupyx = Double("cupyx", real.cupyx, np, {
    "scatter_add": lambda a, slices, value: module_attr("add").at(a, slices, value),
    "scatter_max": lambda a, slices, value: module_attr("maximum").at(a, slices, value),
    "scatter_min": lambda a, slices, value: module_attr("minimum").at(a, slices, value),
    "empty_pinned": _pinned, "zeros_pinned": _zeros_pinned, "scipy": scipy_module,
})
