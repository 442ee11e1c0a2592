"""A batch's images split over as many cores as the BLAS pool uses (``over_images``), for the Numba kernels
that sit between two multi-threaded GEMMs (the Winograd transforms).

The kernels are compiled with ``nogil``, so plain Python threads run them in parallel. Why not Numba's
``prange``: its OpenMP workers spin after each region, on the cores where OpenBLAS's workers spin after each
GEMM, and the two pools took turns waiting for each other (docs/performance.md); a thread of this pool sleeps
on a futex as soon as its part is done. The caller's thread does the first part itself, so a split into two
costs one wake-up (about 20 us here), and parts smaller than MIN_PART_ELEMENTS are not worth one.

Threads: the BLAS pool's size (``mt.set_num_threads``, OPENBLAS_NUM_THREADS or threadpoolctl's limits), read
at each call from OpenBLAS itself, so that minitensor's CPU work uses the cores its GEMMs use, no more.
"""
from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

MIN_PART_ELEMENTS = 2 ** 17  # output elements per part: below this a wake-up costs about what the part saves

_lock = threading.Lock()
_pool: dict[str, Any] = {"pid": None, "executor": None, "workers": 0}


@functools.cache
def _blas_controller() -> Any:
    """threadpoolctl's controller of NumPy's BLAS (its num_threads is one C call), or None. SciPy may load a
    BLAS of its own, with its own pool: NumPy's is the one in NumPy's folder, where a wheel bundles it."""
    import numpy  # (loads the BLAS)
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

    controllers = ThreadpoolController().select(user_api="blas").lib_controllers
    numpy_dir = os.path.dirname(os.path.dirname(numpy.__file__))
    bundled = [c for c in controllers if os.path.basename(os.path.dirname(c.filepath)).startswith("numpy")
               and os.path.dirname(os.path.dirname(c.filepath)) == numpy_dir]
    return (bundled or controllers or [None])[0]


def blas_threads() -> int:
    """The BLAS pool's size now (1 when no BLAS reports one)."""
    controller = _blas_controller()
    return max(int(controller.num_threads or 1), 1) if controller is not None else 1


def _executor(workers: int) -> ThreadPoolExecutor:
    """The shared pool with at least ``workers`` threads; a new one in a forked child (whose copy of the
    parent's pool has no threads behind it)."""
    with _lock:
        if _pool["pid"] != os.getpid() or _pool["workers"] < workers:
            if _pool["pid"] == os.getpid():  # grown: the old pool's threads end once idle
                _pool["executor"].shutdown(wait=False)
            _pool.update(pid=os.getpid(), workers=workers,
                         executor=ThreadPoolExecutor(workers, thread_name_prefix="minitensor-cpu"))
        return _pool["executor"]


def over_images(kernel: Callable[..., None], n_images: int, elements: int, *args: Any) -> None:
    """``kernel(*args, first, stop)`` for consecutive image ranges that cover [0, n_images), in parallel on up
    to ``blas_threads()`` threads; ``elements`` (what the kernel writes in all) sets how many parts pay."""
    parts = min(blas_threads(), n_images, max(elements // MIN_PART_ELEMENTS, 1))
    if parts <= 1:
        kernel(*args, 0, n_images)
        return
    bounds = [n_images * i // parts for i in range(parts + 1)]
    executor = _executor(parts - 1)
    futures: list[Future[None]] = [executor.submit(kernel, *args, bounds[i], bounds[i + 1]) for i in range(1, parts)]
    try:
        kernel(*args, bounds[0], bounds[1])
    finally:
        for future in futures:
            future.result()
