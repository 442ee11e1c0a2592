"""How the CPU's convolutions cut a batch: chunks of images whose work buffers stay in cache
(``images_per_chunk``), and parts, one per thread of NumPy's BLAS pool (``split_batch``), each run on its
own thread with single-threaded GEMMs (``over_parts``).

Why parts on threads, not the BLAS's threads inside each GEMM: between two GEMMs a convolution runs Numba
kernels (the Winograd transforms), which were serial, and each multi-threaded GEMM synchronised its threads
again; on a busy machine, a thread that lost its core held the other one waiting at every GEMM. A part
runs its chunks' kernels and GEMMs alone, and the parts meet once. Numba's ``prange`` was no help: its
OpenMP workers spin after each region, on the cores where OpenBLAS's workers spin after each GEMM, and the
two pools took turns waiting for each other (docs/performance.md); a thread of this pool sleeps on a futex.
The kernels and NumPy's matmul release the GIL, so plain Python threads run them in parallel.

While parts run, NumPy's BLAS is held to one thread (``single_threaded_blas``, reference-counted across
callers); its pool's size is read from OpenBLAS at each call (``mt.set_num_threads``, OPENBLAS_NUM_THREADS,
threadpoolctl's limits), so that the CPU's convolutions use the cores its GEMMs would, no more.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Callable, Iterator, Sequence

CHUNK_BYTES = 2 ** 22  # a chunk's work buffers (im2col columns, Winograd's V and M): about two L2 caches
MIN_PART_BYTES = 2 ** 20  # a part smaller than this costs about as much to hand to a thread as it saves

_lock = threading.Lock()
_pool: dict[str, Any] = {"pid": None, "executor": None, "workers": 0}
_single: dict[str, Any] = {"depth": 0, "saved": None}


def images_per_chunk(n: int, bytes_per_image: int) -> int:
    """Images per chunk: as many as fit CHUNK_BYTES (at least one), spread evenly over the chunks."""
    chunks = -(-n * bytes_per_image // CHUNK_BYTES)
    return max(1, -(-n // max(chunks, 1)))


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
    """The BLAS pool's size now (1 when no BLAS reports one, and inside ``single_threaded_blas``)."""
    controller = _blas_controller()
    return max(int(controller.num_threads or 1), 1) if controller is not None else 1


def split_batch(n: int, bytes_per_image: int) -> list[tuple[range, int]]:
    """(images, images per chunk) for each part of a batch of ``n``: one part per BLAS thread, fewer when a
    part would hold less than MIN_PART_BYTES of work buffers (``bytes_per_image`` each)."""
    parts = min(blas_threads(), n, max(n * bytes_per_image // MIN_PART_BYTES, 1))
    bounds = [n * i // parts for i in range(parts + 1)]
    return [(range(bounds[i], bounds[i + 1]), images_per_chunk(bounds[i + 1] - bounds[i], bytes_per_image))
            for i in range(parts)]


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """NumPy's BLAS on one thread inside (each part's GEMMs run on the part's thread); the first caller in
    saves the pool's size, the last one out restores it."""
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with _lock:
        if _single["depth"] == 0:
            _single["saved"] = controller.num_threads
            controller.set_num_threads(1)
        _single["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _single["depth"] -= 1
            if _single["depth"] == 0:
                controller.set_num_threads(_single["saved"])


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


def over_parts(fn: Callable[..., Any], parts: Sequence[tuple[Any, ...]], gemms: bool = True) -> list[Any]:
    """[fn(*part) for part in parts], the parts at once on as many threads, the caller's doing the first,
    with the BLAS single-threaded meanwhile when the parts run ``gemms``; one part runs directly, on the
    BLAS's own threads."""
    if len(parts) == 1:
        return [fn(*parts[0])]
    with single_threaded_blas() if gemms else contextlib.nullcontext():
        futures = [_executor(len(parts) - 1).submit(fn, *part) for part in parts[1:]]
        try:
            first = fn(*parts[0])
        finally:
            wait(futures)  # no part may outlive the single-threaded section, even when one failed
        return [first, *(future.result() for future in futures)]


def over_leading_parts(kernel: Callable[..., Any], arrays: Sequence[Any], min_elements: int) -> None:
    """``kernel(*arrays)`` for a kernel that works row by row along the arrays' first axis (flat arrays:
    element by element), cut along that axis into one part per BLAS thread when the first array holds at
    least ``min_elements``: for compute-heavy kernels (GELU's erf, attention's exp), whose one pass over a
    large array outlasts the hand-off to a thread several times over."""
    n = arrays[0].shape[0] if arrays[0].ndim else 1
    parts = min(blas_threads(), n) if arrays[0].size >= min_elements else 1
    if parts <= 1:
        kernel(*arrays)
        return
    bounds = [n * i // parts for i in range(parts + 1)]
    over_parts(lambda lo, hi: kernel(*(a[lo:hi] for a in arrays)), list(zip(bounds[:-1], bounds[1:])), gemms=False)
