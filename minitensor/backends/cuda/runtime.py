"""The CUDA runtime behind ``minitensor.cuda`` (PyTorch's ``torch.cuda`` API on CuPy): availability, devices,
synchronisation, the memory pool's counters, pinned host memory and DLPack import; ``streams.py`` has
streams and events. The rest of the package reaches CuPy only through this module and the backend.

``is_available``, ``device_count`` and ``manual_seed`` never raise, and without a GPU the memory counters read 0
and ``empty_cache`` does nothing (PyTorch's answers before CUDA is initialised, which programs print
unconditionally); everything else needs a GPU and raises a RuntimeError saying what is missing (CuPy, a driver
or a GPU) when there is none. CuPy is imported inside the
functions, so ``import minitensor`` never imports it.

Streams and events are in ``streams.py``.

Memory: the counters read CuPy's default memory pool, from which the CUDA backend allocates.
``memory_allocated`` is the bytes in live arrays (``used_bytes``), ``memory_reserved`` the bytes the pool
holds from the driver, live or cached (``total_bytes``). CuPy keeps no high-water mark, and keeping one
exactly puts a Python call on every allocation (a ``cupy.cuda.MemoryHook``, or a Python allocator wrapped
around the pool). So the peaks cost nothing per op and are measured thus:

- ``max_memory_reserved`` is exact: the pool only grows until blocks are released, and ``empty_cache`` folds
  the value in before it releases them. (CuPy also releases cached blocks itself when an allocation fails,
  as does a direct call of the pool's ``free_all_blocks``; a peak from before such a release is kept only
  if it was read before.)
- ``max_memory_allocated`` is the largest ``used_bytes`` seen at the points where minitensor reads the pool:
  every call of the memory functions here and of ``synchronize()``. It is a lower bound of the true peak,
  exact when the peak is read (call ``memory_allocated()`` or ``synchronize()`` where you expect it, e.g.
  after the forward pass); ``max_memory_reserved`` bounds the true peak from above.
"""
from __future__ import annotations

import importlib.util
from typing import Any, Union

import numpy as np

from .. import Backend, backend_class, loaded_backends
from ...device import device as _device

DeviceLike = Union[int, str, _device, None]

_known_available = False  # a GPU found once stays found: is_available() is then one global read


# ---------------------------------------------------------------------------------------- availability
def _cuda_backend_class() -> type[Backend] | None:
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        return backend_class("cuda")
    except Exception:  # a broken or missing CUDA stack means "not available", never an error here
        return None


def is_available() -> bool:
    """True when CuPy, an NVIDIA driver and at least one GPU are present."""
    global _known_available
    if not _known_available:
        cls = _cuda_backend_class()
        try:
            _known_available = bool(cls is not None and cls.is_available())
        except Exception:
            return False
    return _known_available


def device_count() -> int:
    cls = _cuda_backend_class()
    try:
        return int(cls.device_count()) if cls is not None and cls.is_available() else 0
    except Exception:
        return 0


def manual_seed(seed: int) -> None:
    """Seed the generators of the CUDA devices that are in use."""
    for b in loaded_backends():
        if b.name == "cuda":
            b.seed(seed)


manual_seed_all = manual_seed


def _unavailable_reason() -> str:
    try:
        reason = backend_class("cuda").unavailable_reason()
    except RuntimeError as e:  # the backend module did not load: its ImportError says what to install
        reason = str(e.__cause__ or e)
    return f"CUDA is not available: {reason}"


def cupy_module() -> Any:
    """The cupy module, or the RuntimeError that says why CUDA cannot be used."""
    if not is_available():
        raise RuntimeError(_unavailable_reason())
    import cupy
    return cupy


def _device_index(device: DeviceLike) -> int:
    """The CUDA device index of an int, "cuda:N", a device, or None (CuPy's current device)."""
    cp = cupy_module()
    if device is None:
        return cp.cuda.runtime.getDevice()
    if isinstance(device, int):
        index = device
    else:
        d = _device(device)
        if d.type != "cuda":
            raise ValueError(f"expected a cuda device, got '{d}'")
        index = d.index  # type: ignore[assignment]
    count = device_count()
    if not 0 <= index < count:
        raise ValueError(f"invalid CUDA device index {index}: this machine has {count} CUDA device(s)")
    return index


# --------------------------------------------------------------------------------------------- devices
def current_device() -> int:
    """The index of the current CUDA device (CuPy's, per thread)."""
    return _device_index(None)


def set_device(device: DeviceLike) -> None:
    """Make ``device`` CuPy's current device in this thread (where raw CuPy calls allocate and launch).
    minitensor's own ``device("cuda")`` means cuda:0 (see ``minitensor.device``): name ``cuda:N`` for
    the others."""
    cupy_module().cuda.Device(_device_index(device)).use()


def synchronize(device: DeviceLike = None) -> None:
    """Wait until every stream of ``device`` (default: the current one) has finished its queued work."""
    cp = cupy_module()
    index = _device_index(device)
    cp.cuda.Device(index).synchronize()
    _read_pool(index)


# ---------------------------------------------------------------------------------------------- memory
_peak_allocated: dict[int, int] = {}
_peak_reserved: dict[int, int] = {}


def _read_pool(index: int) -> tuple[int, int]:
    """(used, reserved) bytes of CuPy's default pool on device ``index``, folded into the peaks."""
    cp = cupy_module()
    pool = cp.get_default_memory_pool()
    with cp.cuda.Device(index):  # the pool's counters are those of the current device
        used, reserved = pool.used_bytes(), pool.total_bytes()
    _peak_allocated[index] = max(_peak_allocated.get(index, 0), used)
    _peak_reserved[index] = max(_peak_reserved.get(index, 0), reserved)
    return used, reserved


def memory_allocated(device: DeviceLike = None) -> int:
    """Bytes held by live arrays on ``device`` (CuPy's pool ``used_bytes``)."""
    if not is_available():  # PyTorch: 0 until CUDA is initialised, whatever the device
        return 0
    return _read_pool(_device_index(device))[0]


def memory_reserved(device: DeviceLike = None) -> int:
    """Bytes the pool holds from the driver on ``device``, in live arrays or cached for reuse."""
    if not is_available():  # PyTorch: 0 until CUDA is initialised, whatever the device
        return 0
    return _read_pool(_device_index(device))[1]


def max_memory_allocated(device: DeviceLike = None) -> int:
    """The largest ``memory_allocated`` seen since the start or ``reset_peak_memory_stats``: a lower bound
    of the true peak, exact when the peak was read (see the module docstring)."""
    if not is_available():  # PyTorch: 0 until CUDA is initialised, whatever the device
        return 0
    index = _device_index(device)
    _read_pool(index)
    return _peak_allocated[index]


def max_memory_reserved(device: DeviceLike = None) -> int:
    """The peak of ``memory_reserved`` since the start or ``reset_peak_memory_stats`` (exact; see the module
    docstring)."""
    if not is_available():  # PyTorch: 0 until CUDA is initialised, whatever the device
        return 0
    index = _device_index(device)
    _read_pool(index)
    return _peak_reserved[index]


def reset_peak_memory_stats(device: DeviceLike = None) -> None:
    """Restart both peaks from the current values."""
    index = _device_index(device)
    _peak_allocated.pop(index, None)
    _peak_reserved.pop(index, None)
    _read_pool(index)


def empty_cache() -> None:
    """Give the pool's cached (unused) blocks back to the driver on every device minitensor has used and the
    current one; live arrays keep theirs. Other processes and ``nvidia-smi`` then see the memory free."""
    if not is_available():  # PyTorch's does nothing before CUDA is initialised
        return
    cp = cupy_module()
    pool = cp.get_default_memory_pool()
    indices = {b.index for b in loaded_backends() if b.name == "cuda"} | {current_device()}
    for index in sorted(indices):
        _read_pool(index)  # the reserved peak, before the release lowers the pool's total
        with cp.cuda.Device(index):
            pool.free_all_blocks()


# ------------------------------------------------------------------------------------- pinned host memory
def pinned_copy(array: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of host ``array`` in page-locked memory (CuPy's pinned pool, which takes the
    block back when the copy is garbage collected)."""
    cupy_module()
    import cupyx
    out = cupyx.empty_pinned(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def is_pinned(array: np.ndarray) -> bool:
    """Whether host ``array`` lives in page-locked memory (the driver's answer; False without CUDA)."""
    if not is_available() or array.size == 0:
        return False
    from cupy.cuda import pinned_memory
    return bool(pinned_memory.is_memory_pinned(array.ctypes.data))


def host_to_device_async(src: np.ndarray, stream: Any) -> Any:
    """A device array on the current device, allocated from the current stream's arena of CuPy's pool, that
    a copy of pinned host ``src`` queued on ``stream`` (a ``Stream``) fills; the host does not wait."""
    dst = cupy_module().empty(src.shape, src.dtype)
    dst.set(src, stream=stream._stream)
    return dst


# -------------------------------------------------------------------------------------- devices, DLPack
class device:
    """``torch.cuda.device``: inside ``with device(d):``, ``d`` is the current CUDA device (None: no change)."""

    def __init__(self, device: DeviceLike) -> None:
        self.idx = -1 if device is None else _device_index(device)
        self._context: Any = None

    def __enter__(self) -> "device":
        if self.idx >= 0:
            self._context = cupy_module().cuda.Device(self.idx)
            self._context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._context is not None:
            self._context.__exit__(*exc)
            self._context = None


def get_device_name(device: DeviceLike = None) -> str:
    """The GPU's name as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"."""
    index = _device_index(device)
    return cupy_module().cuda.runtime.getDeviceProperties(index)["name"].decode()


def array_from_dlpack(ext_tensor: Any, index: int) -> Any:
    """The CuPy array over the GPU memory of ``ext_tensor`` on device ``index``, usable on CuPy's current
    stream there (the producer orders its pending work before that stream)."""
    cp = cupy_module()  # the clear error when this machine has no usable GPU
    with cp.cuda.Device(index):
        return cp.from_dlpack(ext_tensor)


# ------------------------------------------------------------------------------------------- profiling
def timing_event() -> Any:
    """A CUDA event recorded now on the current stream (the profiler's device clock; never waited on here)."""
    event = cupy_module().cuda.Event()
    event.record()
    return event


def elapsed_ms(start: Any, end: Any) -> float:
    """Milliseconds between two recorded events on the device (``end`` must have completed)."""
    return float(cupy_module().cuda.get_elapsed_time(start, end))
