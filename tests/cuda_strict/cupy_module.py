"""The module installed as ``cupy``: every top-level name resolved against the real CuPy 14 (``functions.resolve``)
with NumPy underneath, plus the explicit doubles below (arrays, transfers, submodules, kernels, pools)."""
from __future__ import annotations

import sys
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from . import cuda_module, random, real
from .convert import unwrap, wrap
from .functions import module_attr, resolve, routine
from .ndarray import ndarray
from .rawkernel import RawKernel, RawModule

__version__ = real.cupy.__version__


class Double(ModuleType):
    """A submodule double (``cupy.linalg``...): names of the real submodule, bodies of the NumPy one."""

    def __init__(self, name: str, real_module: Any, numpy_module: Any, overrides: dict[str, Any] | None = None):
        super().__init__(name)
        self._real, self._numpy, self._overrides = real_module, numpy_module, overrides or {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = resolve(name, self._real, self._numpy, self._overrides)
        setattr(self, name, value)
        return value


def _to_device(a: Any, dtype: Any = None, copy: Any = True, order: Any = None, **kwargs: Any) -> ndarray:
    if isinstance(a, ndarray):
        if (copy is True) or (dtype is not None and np.dtype(dtype) != a.dtype):
            return wrap(np.array(a._a, dtype=dtype, copy=True, order=order or "K"))
        return a
    return wrap(np.array(unwrap(a), dtype=dtype, order=order or "K", copy=True))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, blocking: bool = False) -> ndarray:
    return _to_device(a, dtype, copy=bool(copy) if copy is not None else False, order=order)


def array(obj: Any, dtype: Any = None, copy: Any = True, order: str = "K", subok: bool = False, ndmin: int = 0,
          *, blocking: bool = False) -> ndarray:
    out = _to_device(obj, dtype, copy=copy, order=order)
    return wrap(out._a.reshape((1,) * (ndmin - out.ndim) + out.shape)) if ndmin > out.ndim else out


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None, *, blocking: bool = True) -> Any:
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)  # type: ignore[call-overload]


def from_dlpack(x: Any) -> ndarray:
    if isinstance(x, ndarray):
        return wrap(x._a)
    return wrap(np.from_dlpack(x))


def _matmul(a: Any, b: Any, out: Any = None, **kwargs: Any) -> Any:
    """cuBLAS writes the operands' dtype (NumPy's bfloat16 loop gives float32)."""
    result = np.matmul(a, b, **kwargs).astype(np.result_type(a, b), copy=False)
    if out is None:
        return result
    out[...] = result
    return out


def get_array_module(*args: Any) -> Any:
    return sys.modules["cupy"] if any(isinstance(a, ndarray) for a in args) else np


_pool, _pinned_pool = cuda_module.MemoryPool(), cuda_module.PinnedMemoryPool()
cuda = ModuleType("cupy.cuda")
cuda.__dict__.update({k: v for k, v in vars(cuda_module).items() if not k.startswith("_")})
OVERRIDES: dict[str, Any] = {
    "ndarray": ndarray, "asarray": asarray, "array": array, "asnumpy": asnumpy, "from_dlpack": from_dlpack,
    "get_array_module": get_array_module, "RawModule": RawModule, "RawKernel": RawKernel,
    "matmul": routine("matmul", real.cupy.matmul, _matmul),
    "get_default_memory_pool": lambda: _pool, "get_default_pinned_memory_pool": lambda: _pinned_pool,
    "cuda": cuda, "random": random,
    "linalg": Double("cupy.linalg", real.cupy.linalg, np.linalg),
    "fft": Double("cupy.fft", real.cupy.fft, np.fft),
    "lib": SimpleNamespace(stride_tricks=Double("cupy.lib.stride_tricks", real.cupy.lib.stride_tricks,
                                                 np.lib.stride_tricks)),
    "_core": SimpleNamespace(_routines_linalg=real.cupy._core._routines_linalg),
}


def __getattr__(name: str) -> Any:
    return module_attr(name)
