"""The strict double's ``cupy.ndarray``: a wrapper around a NumPy array, NOT an ``np.ndarray`` subclass, so NumPy
cannot take it implicitly (``np.asarray(a)`` raises CuPy 14's TypeError); ``.get()`` and ``cupy.asnumpy`` copy
to the host. Methods and properties exist only where the real ``cupy.ndarray`` has them (``real.NDARRAY_NAMES``);
operators go through the ufunc doubles, so a host operand is refused as CuPy refuses it."""
from __future__ import annotations

from typing import Any

import weakref

import numpy as np

from . import real
from .convert import IMPLICIT, unwrap, wrap


# the host buffers of live device arrays
_owners: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def live_bytes() -> int:
    """Bytes of the buffers that device arrays own (the double's ``used_bytes``)."""
    return sum(a.nbytes for a in list(_owners.values()))


class MemoryPointer:
    """``a.data``: the address of the first element (the emulated RawKernels read host memory there)."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class _Device:
    id = 0


def _index(key: Any) -> Any:
    """CuPy's index: device arrays, host ints/slices/None/Ellipsis, lists and NumPy arrays (both converted
    to device arrays by ``_prepare_slice_list``)."""
    return unwrap(key)


def _has_advanced(key: Any) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return any(isinstance(p, (np.ndarray, list)) or (isinstance(p, (bool, np.bool_))) for p in parts)


def _ufunc(name: str) -> Any:
    from . import functions
    return functions.module_attr(name)


def _binary(name: str, reflected: bool = False, inplace: bool = False) -> Any:
    def op(self: ndarray, other: Any) -> Any:
        if isinstance(other, np.ndarray):
            raise TypeError(f"Unsupported type {type(other)}")
        if reflected:
            return _ufunc(name)(other, self)
        return _ufunc(name)(self, other, out=self) if inplace else _ufunc(name)(self, other)
    return op


def _unary(name: str) -> Any:
    return lambda self: _ufunc(name)(self)


class ndarray:
    """A device array of the strict CuPy double."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100.0

    def __init__(self, shape: Any, dtype: Any = float, memptr: Any = None, strides: Any = None,
                 order: str = "C") -> None:
        self._a = np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
        _owners[id(self._a)] = self._a

    @classmethod
    def _of(cls, array: np.ndarray) -> ndarray:
        out = object.__new__(cls)
        out._a = array
        if array.base is None:
            _owners[id(array)] = array
        return out

    # ----------------------------------------------------------------------------------- host boundary
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(IMPLICIT)

    def get(self, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True) -> np.ndarray:
        if out is not None:
            np.copyto(out, self._a)
            return out
        return np.array(self._a, order=order)  # type: ignore[call-overload]

    def set(self, arr: Any, stream: Any = None) -> None:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray: {type(arr)}")
        if arr.shape != self._a.shape or arr.dtype != self._a.dtype:
            raise ValueError("Shape or dtype mismatch")
        self._a[...] = arr

    @property
    def data(self) -> MemoryPointer:
        return MemoryPointer(int(self._a.__array_interface__["data"][0]))

    @property
    def device(self) -> _Device:
        return _Device()

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        interface = dict(self._a.__array_interface__)
        interface.update(version=3, stream=1)
        return interface

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("stream", None)
        return self._a.__dlpack__(**{k: v for k, v in kwargs.items() if k in ("max_version", "copy")})

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)  # kDLCUDA, device 0

    # ------------------------------------------------------------------------------ Python protocols
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name not in real.NDARRAY_NAMES:
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        value = getattr(self._a, name)
        if not callable(value):
            return wrap(value) if isinstance(value, np.ndarray) else value

        def method(*args: Any, **kwargs: Any) -> Any:
            for v in (*args, *kwargs.values()):
                if isinstance(v, np.ndarray) and name not in ("take", "put", "repeat", "compress", "choose"):
                    raise TypeError(f"Unsupported type {type(v)}")
            result = value(*unwrap(args), **unwrap(kwargs))
            return self if result is self._a else wrap(result)  # astype(copy=False) etc. return ``self``
        return method

    @property
    def base(self) -> Any:
        return None if self._a.base is None else wrap(self._a.base) if isinstance(self._a.base, np.ndarray) \
            else None

    def __getitem__(self, key: Any) -> Any:
        return wrap(self._a[_index(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(value, np.ndarray) and value.ndim > 0 and not _has_advanced(_index(key)):
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")  # CuPy's basic-index path
        self._a[_index(key)] = unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (wrap(self._a[i]) for i in range(len(self._a)))

    def __bool__(self) -> bool:
        return bool(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __repr__(self) -> str:
        return repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    def __format__(self, spec: str) -> str:
        return format(self._a, spec)

    def __copy__(self) -> ndarray:
        return wrap(self._a.copy())

    def __deepcopy__(self, memo: Any) -> ndarray:
        return wrap(self._a.copy())

    def __reduce__(self) -> Any:
        return (_rebuild, (self._a.copy(),))

    __hash__ = None  # type: ignore[assignment]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy ufuncs on device arrays run CuPy's (which refuse host operands), as CuPy's protocol does."""
        try:
            cupy_ufunc = _ufunc(ufunc.__name__)
        except AttributeError:
            return NotImplemented
        return getattr(cupy_ufunc, method)(*inputs, **kwargs) if method != "__call__" else \
            cupy_ufunc(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        try:
            cupy_func = _ufunc(func.__name__) if func.__module__ in ("numpy", None) else None
        except AttributeError:
            cupy_func = None
        return NotImplemented if cupy_func is None else cupy_func(*args, **kwargs)

    # ------------------------------------------------------------------------------------- operators
    __add__, __radd__, __iadd__ = _binary("add"), _binary("add", True), _binary("add", inplace=True)
    __sub__, __rsub__, __isub__ = _binary("subtract"), _binary("subtract", True), _binary("subtract", inplace=True)
    __mul__, __rmul__, __imul__ = _binary("multiply"), _binary("multiply", True), _binary("multiply", inplace=True)
    __truediv__, __rtruediv__ = _binary("true_divide"), _binary("true_divide", True)
    __itruediv__ = _binary("true_divide", inplace=True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __ifloordiv__ = _binary("floor_divide", inplace=True)
    __mod__, __rmod__, __imod__ = _binary("remainder"), _binary("remainder", True), _binary("remainder", inplace=True)
    __pow__, __rpow__, __ipow__ = _binary("power"), _binary("power", True), _binary("power", inplace=True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__, __iand__ = _binary("bitwise_and"), _binary("bitwise_and", True), \
        _binary("bitwise_and", inplace=True)
    __or__, __ror__, __ior__ = _binary("bitwise_or"), _binary("bitwise_or", True), _binary("bitwise_or", inplace=True)
    __xor__, __rxor__, __ixor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True), \
        _binary("bitwise_xor", inplace=True)
    __lshift__, __rlshift__, __ilshift__ = _binary("left_shift"), _binary("left_shift", True), \
        _binary("left_shift", inplace=True)
    __rshift__, __rrshift__, __irshift__ = _binary("right_shift"), _binary("right_shift", True), \
        _binary("right_shift", inplace=True)
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")  # type: ignore[assignment]
    __lt__, __le__, __gt__, __ge__ = _binary("less"), _binary("less_equal"), _binary("greater"), \
        _binary("greater_equal")
    __divmod__ = _binary("divmod")
    __neg__, __pos__, __abs__, __invert__ = _unary("negative"), _unary("positive"), _unary("absolute"), \
        _unary("invert")


def _rebuild(array: np.ndarray) -> ndarray:
    return ndarray._of(array)
