"""The module installed as ``cupy``: every top-level name resolved against the real CuPy 14 (``functions.resolve``)
with NumPy underneath, plus the explicit doubles below (arrays, transfers, submodules, kernels, pools)."""
from __future__ import annotations

import sys
import warnings
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


def _inv(a: Any) -> Any:
    """cuSOLVER's getrf + getrs: a singular matrix gives its zero pivot's infinities and NaNs, not an error (CuPy
    checks only under ``cupyx.errstate(linalg="raise")``)."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        import scipy.linalg

        n = a.shape[-1]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = [scipy.linalg.lu_solve(scipy.linalg.lu_factor(m, check_finite=False), np.eye(n, dtype=a.dtype),
                                          check_finite=False) for m in a.reshape(-1, n, n)]
        return np.stack(rows).reshape(a.shape).astype(a.dtype, copy=False)


def _compute_types() -> ModuleType:
    """``cupy._core._routines_linalg``'s switch of the GEMMs' compute type (the real constants; a dict of the
    settings, where the real module asks the device)."""
    source = real.cupy._core._routines_linalg
    module = ModuleType("cupy._core._routines_linalg")
    module.__dict__.update({k: getattr(source, k) for k in dir(source) if k.startswith("COMPUTE_TYPE_")})
    settings: dict[str, int] = {}

    def get_compute_type(dtype: Any) -> int:
        return settings.get(np.dtype(dtype).char, source.COMPUTE_TYPE_DEFAULT)

    def set_compute_type(dtype: Any, compute_type: int) -> None:
        settings[np.dtype(dtype).char] = compute_type
    module.__dict__.update(get_compute_type=get_compute_type, set_compute_type=set_compute_type)
    return module


_routines_linalg = _compute_types()
_core = ModuleType("cupy._core")
_core._routines_linalg = _routines_linalg  # type: ignore[attr-defined]


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
    "linalg": Double("cupy.linalg", real.cupy.linalg, np.linalg, {"inv": routine("inv", real.cupy.linalg.inv, _inv)}),
    "fft": Double("cupy.fft", real.cupy.fft, np.fft),
    "lib": SimpleNamespace(stride_tricks=Double("cupy.lib.stride_tricks", real.cupy.lib.stride_tricks,
                                                 np.lib.stride_tricks)),
    "_core": _core,
}


def __getattr__(name: str) -> Any:
    return module_attr(name)
