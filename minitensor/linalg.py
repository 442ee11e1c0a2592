"""``torch.linalg``: norms, inverses and solves, determinants, factorizations. The op families live in
``functional/`` (solve, factorization, norms, linalg); this module is the public namespace."""
from __future__ import annotations

from .backends.generic.solve import LinAlgError
from .functional.factorization import cholesky, eigh, eigvalsh, pinv, qr, svd, svdvals
from .functional.linalg import matmul
from .functional.norms import matrix_norm, norm, vector_norm
from .functional.solve import det, inv, matrix_power, slogdet, solve

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
           "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm"]
