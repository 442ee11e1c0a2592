"""The CPU backend: NumPy, with channels-last convolution (``conv.py``), max pooling (``pooling.py``),
fused optimizer updates (``optim.py``), sequential scans (``reduce.py``), the LSTM recurrence
(``recurrent.py``), attention's softmax (``attention.py``), cross-entropy (``loss.py``), layer norm
(``normalization.py``) and the embedding gradient (``embedding.py``) where they pay, and float32 GEMMs for
the 16-bit floats (``linalg.py``).

Creating the backend also tunes glibc's malloc to keep freed memory for reuse (``retain_freed_memory``).
"""
from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from ..base import Backend
from .activation import CpuActivationOps
from .attention import CpuAttentionOps
from .conv import CpuConvOps
from .embedding import CpuEmbeddingOps
from .linalg import CpuLinalgOps
from .loss import CpuLossOps
from .normalization import CpuNormOps
from .optim import CpuOptimOps
from .pooling import CpuPoolOps
from .recurrent import CpuRecurrentOps
from .reduce import CpuReduceOps

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD, TRIM_THRESHOLD = 32 * 2 ** 20, 256 * 2 ** 20  # see retain_freed_memory


class NumpyBackend(CpuActivationOps, CpuConvOps, CpuLinalgOps, CpuPoolOps, CpuOptimOps, CpuReduceOps,
                   CpuRecurrentOps, CpuNormOps, CpuEmbeddingOps, CpuAttentionOps, CpuLossOps, Backend):
    """The generic bodies on NumPy, with the CPU's own conv, pooling, optimizer and scan families."""

    name = "cpu"
    xp = np
    array_type = np.ndarray

    def __init__(self, index: int = 0) -> None:
        super().__init__(index)
        retain_freed_memory()

    @classmethod
    def is_available(cls) -> bool:
        return True


def retain_freed_memory() -> bool:
    """Ask glibc's malloc to serve arrays up to MMAP_THRESHOLD from its heap and to keep up to
    TRIM_THRESHOLD of freed memory there instead of handing it back to the OS at once.

    A training step frees and allocates the same activation-sized arrays every step. By default glibc maps
    each large array afresh and unmaps it on free, so every step pays a page fault per 4 KiB page touched
    (and, for the arrays NumPy marks for transparent huge pages, the kernel's compaction): a quarter of the
    CNN step here. Process-wide: it changes only when freed memory goes back to the OS (so the resident
    set stays near its high-water mark, by up to TRIM_THRESHOLD). Linux with glibc only;
    MINITENSOR_MALLOC_TUNING=0 leaves malloc as it is. Returns whether the settings were applied."""
    if os.environ.get("MINITENSOR_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and libc.mallopt(M_TRIM_THRESHOLD,
                                                                                       TRIM_THRESHOLD))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt): nothing to tune
        return False
