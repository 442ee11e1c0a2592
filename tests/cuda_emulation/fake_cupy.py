"""A test double of the few CuPy objects that the RawKernel tier touches, for ``sys.modules["cupy"]``.

- ``RawModule(code=, options=, name_expressions=)`` compiles ``code`` with g++ (``build.py``) and
  ``get_function(name)`` gives a kernel whose call ``(grid, block, args)`` marshals ``args`` as CuPy's
  ``cupy.cuda.function._pointer`` does: a device array passes its data pointer; a NumPy scalar its bytes
  (its own size: an np.int32 where the kernel reads ``long long`` is garbage there as here); a Python int
  an int64, a float a float64; anything else, a host NumPy array included, is a TypeError. grid and block
  must be tuples, padded with 1s.
- ``cuda.runtime.getDevice()`` and ``cuda.Device(i)`` for one device, 0.
- Everything else is NumPy's, with ``DeviceArray`` as ``ndarray``: a NumPy array that carries
  ``.data.ptr``. Arrays this module allocates (``empty``, ``zeros``, ``asarray``, ``ascontiguousarray``, ...)
  sit between two guard zones of NaNs (``_guard_pattern``), checked after every launch, so a kernel that
  writes out of bounds fails, and one that reads out of bounds mostly reads NaN.
"""
from __future__ import annotations

import ctypes
import os
import types
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import build

GUARD = 256  # bytes before and after every allocation
_GUARDS: dict[int, tuple[weakref.ref[np.ndarray], bytes]] = {}  # id(buffer) -> (buffer, its guard bytes)
_patterns = np.random.default_rng(0)


def _guard_pattern(dtype: np.dtype) -> bytes:
    """2 * GUARD bytes of NaNs of the array's float format (2, 4 or 8 bytes) with random payloads: a kernel
    that reads out of bounds mostly reads NaN, and one that writes there cannot write back the same bytes by
    chance (not even a NaN carried over from another array's guard, whose payloads differ)."""
    itemsize = dtype.itemsize
    if itemsize == 2:  # quiet NaNs: bfloat16's with 6 bits of payload, float16's with 9
        base, bits = (0x7FC0, 6) if dtype.name == "bfloat16" else (0x7E00, 9)
        words = np.uint16(base) | _patterns.integers(0, 2 ** bits, 2 * GUARD // 2, dtype=np.uint16)
    elif itemsize == 4:
        words = np.uint32(0x7FC00000) | _patterns.integers(0, 2 ** 22, 2 * GUARD // 4, dtype=np.uint32)
    else:
        words = np.uint64(0x7FF8000000000000) | _patterns.integers(0, 2 ** 51, 2 * GUARD // 8, dtype=np.uint64)
    return words.tobytes()


class MemoryPointer:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class DeviceArray(np.ndarray):
    """"Device" memory: a NumPy array with CuPy's ``.data.ptr`` (the address of its first element)."""

    @property
    def data(self) -> MemoryPointer:  # type: ignore[override]
        return MemoryPointer(self.__array_interface__["data"][0])


ndarray = DeviceArray


# ------------------------------------------------------------------------------------------ allocation
def _allocate(shape: Any, dtype: Any) -> DeviceArray:
    dtype = np.dtype(dtype)
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    pattern = _guard_pattern(dtype)
    raw = np.empty(nbytes + 2 * GUARD, dtype=np.uint8)
    raw[:GUARD] = np.frombuffer(pattern[:GUARD], np.uint8)
    raw[GUARD + nbytes:] = np.frombuffer(pattern[GUARD:], np.uint8)
    key = id(raw)
    _GUARDS[key] = (weakref.ref(raw), pattern)
    weakref.finalize(raw, _GUARDS.pop, key, None)
    return raw[GUARD:GUARD + nbytes].view(dtype).reshape(shape).view(DeviceArray)


def _to_device(a: Any, dtype: Any = None) -> DeviceArray:
    host = np.asarray(a, dtype=dtype)
    out = _allocate(host.shape, host.dtype)
    out[...] = host
    return out


def empty(shape: Any, dtype: Any = float) -> DeviceArray:
    return _allocate(shape, dtype)


def zeros(shape: Any, dtype: Any = float) -> DeviceArray:
    out = _allocate(shape, dtype)
    out.fill(0)
    return out


def ones(shape: Any, dtype: Any = float) -> DeviceArray:
    out = _allocate(shape, dtype)
    out.fill(1)
    return out


def full(shape: Any, value: Any, dtype: Any = None) -> DeviceArray:
    return _to_device(np.full(shape, value, dtype=dtype))


def empty_like(a: Any, dtype: Any = None) -> DeviceArray:
    return _allocate(np.shape(a), dtype or a.dtype)


def zeros_like(a: Any, dtype: Any = None) -> DeviceArray:
    return zeros(np.shape(a), dtype or a.dtype)


def asarray(a: Any, dtype: Any = None) -> DeviceArray:
    if isinstance(a, DeviceArray) and (dtype is None or a.dtype == np.dtype(dtype)):
        return a
    return _to_device(a, dtype)


def array(a: Any, dtype: Any = None, copy: bool = True) -> DeviceArray:
    return _to_device(a, dtype) if copy else asarray(a, dtype)


def ascontiguousarray(a: Any, dtype: Any = None) -> DeviceArray:
    if isinstance(a, DeviceArray) and a.flags.c_contiguous and (dtype is None or a.dtype == np.dtype(dtype)):
        return a
    return _to_device(np.ascontiguousarray(a, dtype=dtype))


def asnumpy(a: Any) -> np.ndarray:
    return np.array(a).view(np.ndarray)  # a host copy


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """In the operands' dtype, as CuPy's (cuBLAS writes bfloat16; NumPy's loop for ml_dtypes' bfloat16
    returns float32)."""
    result = np.matmul(a, b).astype(np.result_type(a, b), copy=False)
    if out is None:
        return _as_device(result)
    out[...] = result
    return out


def check_guards(arrays: Sequence[Any], kernel: str) -> None:
    """RuntimeError when a launch wrote into the guard zone of one of its array arguments."""
    for position, a in enumerate(arrays):
        if not isinstance(a, DeviceArray):
            continue
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        ref, pattern = _GUARDS.get(id(root), (None, b""))
        if ref is not None and ref() is root and (root[:GUARD].tobytes() + root[-GUARD:].tobytes()) != pattern:
            raise RuntimeError(f"{kernel}: wrote outside argument {position} (out-of-bounds write)")


def __getattr__(name: str) -> Any:
    """The rest of the array API is NumPy's; functions return DeviceArrays where NumPy gives ndarrays."""
    attr = getattr(np, name)
    if isinstance(attr, (type, np.ufunc)) or not callable(attr):
        return attr  # dtypes, ufuncs (which keep the subclass of their inputs), submodules, constants

    def on_device(*args: Any, **kwargs: Any) -> Any:
        return _as_device(attr(*args, **kwargs))
    return on_device


def _as_device(result: Any) -> Any:
    if isinstance(result, np.ndarray) and not isinstance(result, DeviceArray):
        return result.view(DeviceArray)
    if isinstance(result, tuple):
        return tuple(_as_device(r) for r in result)
    return result


# ------------------------------------------------------------------------------------ kernel launches
_NUMPY_SCALARS = {np.dtype(c).type for c in "?bhilqBHILQefdFD"}  # what CuPy passes by value


def _argument(x: Any) -> ctypes.Array:
    """The bytes CuPy hands the driver for one kernel argument (cupy/cuda/function.pyx, ``_pointer``)."""
    if x is None:
        return (ctypes.c_char * 8)()  # a null pointer
    if isinstance(x, DeviceArray):
        return (ctypes.c_char * 8).from_buffer_copy(np.uint64(x.data.ptr).tobytes())
    if type(x) not in _NUMPY_SCALARS:
        if isinstance(x, int):  # bool too: it is an int
            x = np.int64(x)
        elif isinstance(x, float):
            x = np.float64(x)
        elif isinstance(x, complex):
            x = np.complex128(x)
        else:
            raise TypeError(f"Unsupported type {type(x)}")
    data = x.tobytes()
    return (ctypes.c_char * len(data)).from_buffer_copy(data)


class RawKernel:
    max_threads_per_block = 1024

    def __init__(self, library: ctypes.CDLL, name: str) -> None:
        self.name = name
        self._launch = getattr(library, build.symbol(name))
        self._launch.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint),
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
        self._error = library.emu_last_error
        self._error.restype = ctypes.c_char_p

    def __call__(self, grid: tuple, block: tuple, args: Sequence[Any], shared_mem: int = 0,
                 stream: Any = None) -> None:
        if not isinstance(grid, tuple) or not isinstance(block, tuple):
            raise TypeError("grid and block must be tuples")  # Cython's `tuple grid` in CuPy
        grid3 = (ctypes.c_uint * 3)(*(max(1, g) for g in (grid + (1, 1))[:3]))
        block3 = (ctypes.c_uint * 3)(*(max(1, b) for b in (block + (1, 1))[:3]))
        buffers = [_argument(a) for a in args]
        params = (ctypes.c_void_p * max(1, len(buffers)))(*(ctypes.addressof(b) for b in buffers))
        if self._launch(grid3, block3, params, len(buffers)) != 0:
            raise RuntimeError(f"emulated launch failed: {self._error().decode()}")
        check_guards(args, self.name)


class RawModule:
    def __init__(self, code: str, options: Sequence[str] = (), name_expressions: Sequence[str] = ()) -> None:
        std = next((o for o in options if o.startswith("-std=")), "-std=c++17")
        self.name_expressions = list(name_expressions)
        self._library = ctypes.CDLL(str(build.build(code, self.name_expressions, std,
                                                    os.environ.get(build.SANITIZE_ENV, ""))))

    def get_function(self, name: str) -> RawKernel:
        if name not in self.name_expressions:
            raise KeyError(f"{name} is not among the module's name expressions")
        return RawKernel(self._library, name)


# -------------------------------------------------------------------------------------------- devices
class Device:
    def __init__(self, device: int = 0) -> None:
        if device != 0:
            raise ValueError("the emulation has one device, 0")

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def synchronize(self) -> None:
        return None


cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDevice=lambda: 0), Device=Device)
