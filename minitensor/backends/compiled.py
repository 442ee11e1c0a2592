"""What our compiled kernels cover, one definition for both devices: the CPU's Numba loops
(``cpu/numba_kernels/``), the CUDA RawKernels (``cuda/kernels/``) and Numba kernels (``cuda/numba_kernels/``).

Each is compiled for ``KERNEL_DTYPES`` only; the flat kernels (optimizer updates, dropout) also need
C-contiguous arrays of one shape, which ``kernel_fits`` checks. Anything else goes to the generic body.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

Array = Any

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# The profiler's ``Recorder.kernel`` while a profile records (minitensor/profiler/recorder.py), else None:
# every launch of one of our kernels goes through ``run_kernel``, which reports it to the hook when set.
launch_hook: Any = None


def run_kernel(name: str, on_device: bool, kernel: Callable[..., Any], *args: Any) -> None:
    """``kernel(*args)``, as a profiler event named ``name`` (timed on the device when ``on_device``) while
    a profile records."""
    if launch_hook is None:
        kernel(*args)
    else:
        launch_hook(name, on_device, kernel, args)


def kernel_fits(first: Array, *others: Array) -> bool:
    """Whether a flat kernel covers these arrays: C-contiguous (it walks flat views), one shape, one dtype
    among ``KERNEL_DTYPES``."""
    if first.dtype not in KERNEL_DTYPES or not first.flags.c_contiguous:
        return False
    for a in others:  # a loop, not all(generator): this runs once per parameter per step
        if a.dtype != first.dtype or a.shape != first.shape or not a.flags.c_contiguous:
            return False
    return True


def flat(a: Array) -> Array:
    """The 1-D view of a C-contiguous array (no copy, so a kernel's writes land in ``a``)."""
    return a.reshape(-1)


def dense_flat(a: Array) -> Array | None:
    """The 1-D view of ``a``'s memory in memory order when ``a`` fills its memory without gaps in some
    order of its axes (C, Fortran, channels-last...), else None (a broadcast or sliced view). Two arrays of
    one shape and the same strides give views whose index i is the same element of each."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    order = sorted(range(a.ndim), key=lambda axis: -a.strides[axis])
    t = a.transpose(order)
    return t.reshape(-1) if t.flags.c_contiguous else None
