"""``CudaBackend``: the backend interface on one NVIDIA GPU, through CuPy and our kernels.

Every op sits in one tier (the design notes, section 4):

- ``CupyBackend`` (this module): the base class's generic bodies with ``xp = cupy`` - arithmetic,
  reductions, shapes, matmul (cuBLAS) - plus the four methods where CuPy's API differs from NumPy's;
- one mixin per op family where a kernel pays, in ``<family>.py``: ``activation``, ``conv``, ``pooling``,
  ``loss``, ``embedding`` (our ``.cu`` RawKernels, ``kernels/<family>.cu``, through ``rawmodule.py``) and
  ``dropout``, ``optim`` (Numba kernels, ``numba_kernels/<family>.py``).

A kernel method falls back to ``super()`` for what it does not cover, which lands on the CuPy bodies.

Devices. ``CudaBackend(index)`` runs every method of the interface with ``cupy.cuda.Device(index)`` current,
so what a method allocates (creation, host-to-device copies, results), its kernels and its random state live
on that GPU. Tensors move between GPUs through host memory (``Tensor.to``). What does not hold yet: array
expressions written directly in ``Function`` bodies and in the engine (``gy * y``) run on the *current*
device, which is GPU 0 unless the program changes it; with tensors on ``cuda:N`` (N > 0) those either go
through peer access with their result on the current device, or fail. One GPU per process (``cuda:0``, or
any GPU made current with ``cupy.cuda.Device(N).use()`` and used as ``cuda:N``) is fully supported.
"""
from __future__ import annotations

import copy
import functools
import importlib.util
import inspect
import os
import threading
from typing import Any, Callable

import numpy as np

from ...deterministic import alert_not_deterministic
from ..base import Backend

INSTALL_HINT = ('pip install "minitensor[cuda12]" or "minitensor[cuda13]", the one matching the CUDA version '
                "that nvidia-smi reports")


def _cupy_import_failure(error: ImportError) -> str:
    """Why ``import cupy`` failed: not installed, or installed but broken."""
    if importlib.util.find_spec("cupy") is None:
        return f"CUDA devices need CuPy, which is not installed: {INSTALL_HINT}"
    return (f"CuPy is installed but cannot be imported ({error}); reinstall it, one cupy-cuda* "
            f"package only: {INSTALL_HINT}")


try:
    import cupy
except ImportError as e:  # before the kernel modules import it, so that the error says what to install
    raise ImportError(_cupy_import_failure(e)) from e

try:
    from .dropout import CudaDropoutOps
    from .optim import CudaOptimOps
except ImportError as e:  # numba-cuda comes with CuPy in the same extras
    if (e.name or "").partition(".")[0] != "numba":
        raise
    raise ImportError(f"CUDA devices need numba-cuda, which cannot be imported ({e}): {INSTALL_HINT}") from e
from .activation import CudaActivationOps  # noqa: E402 (after the checks above)
from .amp import CudaAmpOps  # noqa: E402
from .conv import CudaConvOps  # noqa: E402
from .embedding import CudaEmbeddingOps  # noqa: E402
from .loss import CudaLossOps  # noqa: E402
from .pooling import CudaPoolOps  # noqa: E402
from .flags import apply_tf32  # noqa: E402
from .linalg import accumulate_half_gemms_in_float32  # noqa: E402
from .sparse import CudaSparseOps  # noqa: E402
from .special import CudaSpecialOps  # noqa: E402
from ..generic.shape import reduce_at  # noqa: E402

Array = Any
# The dtypes of CuPy 14's unbuffered ufunc.at (its atomics; cupy/_core/_routines_indexing.pyx): add.at and
# maximum.at / minimum.at raise TypeError for any other, and multiply.at does not exist.
_ADD_AT_DTYPES = frozenset(map(np.dtype, ("int32", "uint32", "uint64", "float16", "float32", "float64")))
_MAX_MIN_AT_DTYPES = frozenset(map(np.dtype, ("int32", "uint32", "uint64", "float32", "float64")))

_CUDA_ERROR_INSUFFICIENT_DRIVER = 35  # cudaErrorInsufficientDriver: the driver is older than the runtime
_CUDA_ERROR_NO_DEVICE = 100  # cudaErrorNoDevice


def _cuda_version(v: int) -> str:
    """CUDA's integer version as text: 12040 -> "12.4"."""
    return f"{v // 1000}.{v % 1000 // 10}"


def _probe() -> tuple[int, str]:
    """(number of GPUs CuPy can use, why there is none when it is 0). Never raises."""
    runtime = cupy.cuda.runtime
    try:
        driver = runtime.driverGetVersion()  # 0 when no driver is loaded
        if driver == 0:
            return 0, ("CuPy is installed but no NVIDIA driver was found: install the NVIDIA driver, or "
                       "give this machine or container access to the GPU (nvidia-smi must work)")
        try:
            count = runtime.getDeviceCount()
        except runtime.CUDARuntimeError as e:
            if e.status == _CUDA_ERROR_INSUFFICIENT_DRIVER:
                need = runtime.runtimeGetVersion()
                return 0, (f"the NVIDIA driver supports CUDA {_cuda_version(driver)} but this CuPy needs "
                           f"CUDA {_cuda_version(need)}: update the driver, or install the CuPy for the "
                           f"driver's CUDA version: {INSTALL_HINT}")
            if e.status != _CUDA_ERROR_NO_DEVICE:
                return 0, f"the CUDA runtime reports {e}"
            count = 0
        if count == 0:
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            hidden = "" if visible is None else f" (CUDA_VISIBLE_DEVICES={visible!r} hides the others)"
            return 0, (f"CuPy and an NVIDIA driver (CUDA {_cuda_version(driver)}) are present but no GPU "
                       f"is visible{hidden}")
        return count, ""
    except Exception as e:  # a broken CUDA stack means "not available", never an error here
        return 0, f"probing the CUDA runtime failed: {e!r}"


def _on_own_device(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` run with the backend's GPU current; when it already is (the usual case), the cost is one
    cudaGetDevice."""
    get_device = cupy.cuda.runtime.getDevice

    @functools.wraps(method)
    def run(self: Backend, *args: Any, **kwargs: Any) -> Any:
        if get_device() == self.index:
            return method(self, *args, **kwargs)
        with cupy.cuda.Device(self.index):
            return method(self, *args, **kwargs)
    return run


def _runs_on_own_device(cls: type) -> type:
    """Wrap every public instance method of ``cls`` (the interface and any public helper of the kernel
    mixins) in ``_on_own_device``; class methods (availability) need no device."""
    for name in dir(cls):
        if not name.startswith("_") and inspect.isfunction(inspect.getattr_static(cls, name)):
            setattr(cls, name, _on_own_device(getattr(cls, name)))
    return cls


class CupyBackend(Backend):
    """The generic bodies on CuPy. CuPy has most of NumPy's API; where it does not, the smallest fix:

    - ``to_numpy``: ``np.asarray`` refuses device arrays; ``cupy.asnumpy`` copies to the host;
    - ``permutation``: ``cupy.random.Generator`` has none; an argsort of uniform draws is one;
    - ``copy_rng``: ``cupy.random.Generator`` cannot be deep-copied; its device state can;
    - ``index_add`` and ``combine_at``: CuPy's ``ufunc.at`` covers few dtypes and no product; the rest go
      through ``generic/shape.py``'s ``reduce_at``."""

    xp = cupy
    array_type = cupy.ndarray

    def to_numpy(self, a: Array) -> np.ndarray:
        return cupy.asnumpy(a)  # waits for the work that makes ``a``: a host sync, as any transfer to host

    def data_ptr(self, a: Array) -> int:
        return int(a.data.ptr)  # CuPy arrays have no __array_interface__

    def permutation(self, n: int, rng: Any = None) -> Array:
        return cupy.argsort((rng or self._rng).random(n))

    def copy_rng(self, rng: Any = None) -> Any:
        """``cupy.random.Generator`` cannot be deep-copied (its BitGenerator holds a ``threading.Lock``): a
        shallow copy of both objects with the generator's state (a device array) and lock of its own."""
        rng = self._rng if rng is None else rng
        bits = copy.copy(rng.bit_generator)
        bits.lock = threading.Lock()
        bits._state = rng.bit_generator._state.copy()
        clone = copy.copy(rng)
        clone.bit_generator = bits
        if getattr(rng, "_binomial_state", None) is not None:  # drawn lazily by binomial: a state of its own
            clone._binomial_state = rng._binomial_state.copy()
        return clone

    def index_add(self, out: Array, index: Any, src: Array) -> Array:
        """out[index] += src, repeated indices accumulating: ``cupy.add.at`` (atomicAdd) where CuPy has it,
        int64 through its uint64 view (two's-complement wrap-around is the same addition), the other dtypes
        (bfloat16, int8, uint8, int16, bool) by ``reduce_at``'s sort and segmented scan."""
        alert_not_deterministic("index_add_cuda")  # atomicAdd: repeated indices add in any order
        if out.dtype == np.int64:
            values = cupy.asarray(src, dtype=np.int64).view(np.uint64)
            cupy.add.at(out.view(np.uint64), index, values)
            return out
        if out.dtype in _ADD_AT_DTYPES:
            return super().index_add(out, index, src)
        return reduce_at(cupy, cupy.add, out, index, src)

    def combine_at(self, reduce: str, out: Array, index: Any, src: Array) -> Array:
        """``maximum.at`` / ``minimum.at`` where CuPy has them; "prod" (CuPy has no ``multiply.at``) and the
        other dtypes by ``reduce_at``."""
        if reduce != "prod" and out.dtype in _MAX_MIN_AT_DTYPES:
            return super().combine_at(reduce, out, index, src)
        ufunc = {"prod": cupy.multiply, "amax": cupy.maximum, "amin": cupy.minimum}[reduce]
        return reduce_at(cupy, ufunc, out, index, src)


@_runs_on_own_device
class CudaBackend(CudaActivationOps, CudaConvOps, CudaPoolOps, CudaLossOps, CudaDropoutOps, CudaEmbeddingOps,
                  CudaOptimOps, CudaSparseOps, CudaAmpOps, CudaSpecialOps, CupyBackend):
    """GPU ``index`` (``device("cuda:index")``): the kernel tiers over the CuPy bodies, each method run with
    that GPU current."""

    name = "cuda"

    def __init__(self, index: int = 0) -> None:
        count = self.device_count()
        if not 0 <= index < count:
            raise RuntimeError(f"device 'cuda:{index}' does not exist: this machine has {count} CUDA "
                               "device(s)")
        super().__init__(index)  # sets self.index, then seeds this GPU's generator
        accumulate_half_gemms_in_float32(cupy)  # float16 GEMMs: float32 accumulation (linalg.py)
        apply_tf32(creating_backend=True)  # backends.cuda.matmul.allow_tf32 set before the first CUDA tensor

    @classmethod
    def is_available(cls) -> bool:
        """True when CuPy imports, an NVIDIA driver is loaded and at least one GPU is visible."""
        return _probe()[0] > 0

    @classmethod
    def device_count(cls) -> int:
        return _probe()[0]

    @classmethod
    def unavailable_reason(cls) -> str:
        """Which of CuPy, the driver (or a recent enough one) and a GPU is missing, and what to do ("" when
        CUDA is available). A missing CuPy is reported by the import of this module, before this class."""
        return _probe()[1]

    def synchronize(self) -> None:
        """Wait for all work queued on this GPU, on every stream, to finish."""
        cupy.cuda.Device(self.index).synchronize()
