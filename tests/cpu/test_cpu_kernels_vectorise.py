"""The CPU's Numba loops compile to vector instructions (``backends/cpu/numba_kernels/``): the loops over C
were written so that LLVM vectorises them, and a change that leaves one scalar (a masked load of bytes, a
doubt about aliasing) keeps its results but costs 10x its time. Each kernel is compiled afresh (the cached
builds cannot be inspected) and its LLVM IR searched for the vector operations the loop's body needs."""
from __future__ import annotations

import re

import numpy as np
import pytest

from minitensor.backends.cpu import numba_kernels

pooling = numba_kernels.load("pooling")
pytestmark = pytest.mark.skipif(pooling is None, reason="numba not installed")


def llvm_ir(kernel, *args) -> str:
    """The LLVM IR of ``kernel`` compiled for ``args`` (a fresh, uncached compilation of its Python body)."""
    from numba import njit

    fresh = njit(nogil=True, error_model="numpy")(kernel.py_func)
    fresh(*args)
    return "".join(fresh.inspect_llvm().values())


def test_max_pool_merges_a_window_with_vector_compares():
    x = np.random.default_rng(0).standard_normal((2, 8, 8, 32)).astype(np.float32)
    y, offsets = np.empty((2, 4, 4, 32), np.float32), np.empty((2, 4, 4, 32), np.uint8)
    ir = llvm_ir(pooling.max_pool2d, x, y, offsets, 2, 2, 2, 2, 0, 0, 1, 1)
    assert re.search(r"fcmp \w+ <\d+ x float>", ir)
    # a masked load of bytes (the argmax kept in the uint8 offsets) has no AVX2 instruction: LLVM splits it
    # into a branch per byte, and the kernel ran 15x slower
    assert not re.search(r"llvm\.masked\.(load|store)\.v\d+i8", ir)
