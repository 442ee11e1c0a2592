"""The strict double's routines: every name resolved against the real module (``real.py``), arguments bound to
the real signature, host NumPy arrays refused as CuPy refuses them, NumPy underneath, results wrapped. ufuncs
check dtypes against the real ufunc's ``.types`` and ``ufunc.at`` follows CuPy 14's ``_scatter_op`` rules."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import ml_dtypes
import numpy as np

from . import real
from .convert import refuse_host, unwrap, wrap

HOST_OK = frozenset({"array", "asarray", "asanyarray", "get_array_module"})  # CuPy converts host data there
_CHARS = {"E": np.dtype(ml_dtypes.bfloat16)}  # CuPy's type-string letter for bfloat16
# cupy/_core/_routines_indexing.pyx, _scatter_op_single: the dtypes each ufunc.at accepts with integer indices.
_I32, _U32, _I64, _U64 = np.int32, np.uint32, np.int64, np.uint64
AT_DTYPES: dict[str, tuple[type, ...]] = {
    "add": (_I32, np.float16, np.float32, np.float64, _U32, _U64, np.ulonglong),
    "sub": (_I32, _U32),
    "max": (_I32, np.float32, np.float64, _U32, _U64, np.ulonglong),
    "min": (_I32, np.float32, np.float64, _U32, _U64, np.ulonglong),
    "and": (_I32, _I64, _U32, _U64, np.longlong, np.ulonglong),
    "or": (_I32, _I64, _U32, _U64, np.longlong, np.ulonglong),
    "xor": (_I32, _I64, _U32, _U64, np.longlong, np.ulonglong),
}


def _dtype(char: str) -> np.dtype:
    return _CHARS.get(char) or np.dtype(char)


class Ufunc:
    """A CuPy ufunc over NumPy's: ``nin``/``nout``/``types`` of the real one; a loop must accept the inputs."""

    def __init__(self, name: str, real_ufunc: Any, impl: Callable[..., Any]) -> None:
        self.__name__ = self.name = name
        self._real, self._impl = real_ufunc, impl
        self.nin, self.nout, self.nargs, self.types = real_ufunc.nin, real_ufunc.nout, real_ufunc.nargs, \
            real_ufunc.types
        self._loops = [tuple(_dtype(c) for c in t.split("->")[0]) for t in real_ufunc.types]

    def _check(self, args: tuple, kwargs: dict) -> None:
        if len(args) > self.nin + self.nout:
            raise TypeError(f"Wrong number of arguments for {self._real.name}")
        unknown = set(kwargs) - {"out", "dtype", "casting", "where"}
        if unknown:
            raise TypeError(f"Wrong arguments {kwargs}")
        for a in (*args, kwargs.get("out"), kwargs.get("where")):
            if isinstance(a, np.ndarray) or (isinstance(a, tuple) and any(isinstance(x, np.ndarray) for x in a)):
                raise TypeError(f"Unsupported type {type(a)}")
        if kwargs.get("dtype") is not None:
            return
        in_dtypes = [(i, a.dtype) for i, a in enumerate(args[:self.nin]) if hasattr(a, "_a")]
        if in_dtypes and not any(all(np.can_cast(d, loop[i]) for i, d in in_dtypes) for loop in self._loops):
            raise TypeError(f"Wrong type ({tuple(d for _, d in in_dtypes)}) of arguments for {self._real.name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._check(args, kwargs)
        with np.errstate(all="ignore"):  # CuPy's kernels never warn about inf or NaN
            return wrap(self._impl(*unwrap(args), **unwrap(kwargs)))

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        op = getattr(self._real, "_scatter_op", None)
        if op is None:
            raise NotImplementedError(f"`{self._real.name}.at` is not supported yet")
        refuse_host(b, f"{self.name}.at")
        index = unwrap(indices)
        parts = index if isinstance(index, tuple) else (index,)
        advanced = [np.asarray(p) for p in parts if isinstance(p, (np.ndarray, list))]
        if advanced and any(p.dtype.kind != "b" for p in advanced) and not issubclass(a.dtype.type, AT_DTYPES[op]):
            raise TypeError(f"cupy.{self.name}.at does not support {a.dtype} (CuPy 14 _scatter_op_single)")
        self._impl.at(a._a, index, unwrap(b))

    def _only(self, method: str, names: tuple[str, ...]) -> None:
        if self.name not in names:
            raise NotImplementedError(f"`{self._real.name}.{method}` is not supported yet")

    def reduce(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        self._only("reduce", ("add", "multiply"))
        return wrap(self._impl.reduce(array._a, axis, dtype, unwrap(out), keepdims=keepdims))

    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        self._only("accumulate", ("add", "multiply"))
        return wrap(self._impl.accumulate(array._a, axis, dtype, unwrap(out)))

    def outer(self, A: Any, B: Any, **kwargs: Any) -> Any:
        refuse_host((A, B), f"{self.name}.outer")
        return wrap(self._impl.outer(unwrap(A), unwrap(B), **unwrap(kwargs)))


def routine(name: str, real_fn: Callable[..., Any], impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` (NumPy's) behind the real routine's signature and CuPy's refusal of host arrays."""
    try:
        signature: inspect.Signature | None = inspect.signature(real_fn)
    except (TypeError, ValueError):
        signature = None

    @functools.wraps(real_fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if signature is not None:
            signature.bind(*args, **kwargs)
        if name not in HOST_OK:
            refuse_host(args, name)
            refuse_host(tuple(kwargs.values()), name)
        with np.errstate(all="ignore"):
            return wrap(impl(*unwrap(args), **unwrap(kwargs)))
    return call


def resolve(name: str, real_module: Any, numpy_module: Any, overrides: dict[str, Any]) -> Any:
    """The double of ``real_module.name``: AttributeError where the real module lacks it."""
    real_attr = getattr(real_module, name)  # AttributeError: real CuPy has no such name
    if name in overrides:
        return overrides[name]
    if isinstance(real_attr, real.ufunc):
        return Ufunc(name, real_attr, getattr(numpy_module, name))
    if isinstance(real_attr, type) or not callable(real_attr):
        return real_attr  # dtypes (NumPy's own types in CuPy), constants
    impl = getattr(numpy_module, name, None)
    if impl is None:
        raise AttributeError(f"the strict CuPy double has no NumPy body for {real_module.__name__}.{name}")
    if isinstance(impl, np.ufunc):  # a CuPy routine that NumPy spells as a ufunc (cupy.matmul...)
        return routine(name, real_attr, impl)
    return routine(name, real_attr, impl)


_cache: dict[str, Any] = {}


def module_attr(name: str) -> Any:
    """``cupy.<name>`` of the double (cached)."""
    if name not in _cache:
        from . import cupy_module
        _cache[name] = resolve(name, real.cupy, np, cupy_module.OVERRIDES)
    return _cache[name]
