"""The creation functions: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``ones``, ``empty``, ``full``,
``arange``, ``linspace``, ``eye``, the ``*_like`` forms and the random ``rand*`` draws (PyTorch's names and
dtype inference; ``minitensor`` re-exports them all)."""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from . import dtypes as _dt
from . import memory_formats as _mf
from .device import as_device, cpu, device, explicit_default_device
from .generator import Generator, stream_of
from .tensor import Tensor, _bump_version, _wrap
from .tensor_shape import sizes_of as _sizes


def _new_shape(args: tuple, name: str = "empty") -> tuple[int, ...]:
    """The size arguments of a creation function: integers (PyTorch's TypeError naming the function), none
    negative (PyTorch's RuntimeError)."""
    shape = _sizes(args)
    if not all(type(n) is int for n in shape):
        for i, n in enumerate(shape):
            try:
                operator.index(n)
            except TypeError:
                whole = len(args) == 1 and not isinstance(args[0], (tuple, list))
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                + (f"not {type(n).__name__}" if whole else
                                   f"but found element of type {type(n).__name__} at pos {i}")) from None
        shape = tuple(operator.index(n) for n in shape)
    if shape and min(shape) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return shape


def _infer_numpy(data: Any, dtype: Any = None) -> np.ndarray:
    """An ndarray for ``data`` with PyTorch's inference: Python floats give the default float dtype. With a
    ``dtype`` asked for, the values are kept at full precision for the one cast to it (0.1 as float64 stays
    the float64 0.1, not a float32 rounding of it)."""
    if isinstance(data, Tensor):
        return data._device.backend.to_numpy(data.array)
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [_infer_numpy(x) for x in data]
    try:
        arr = np.asarray(data)
    except ValueError:  # NumPy 2 refuses ragged nested sequences outright
        raise ValueError(f"could not make a tensor from {type(data).__name__}: the nested sequences have "
                         "different lengths") from None
    if dtype is not None and arr.dtype.kind != "O":
        return arr
    if arr.dtype == np.float64:
        arr = arr.astype(_dt.get_default_dtype().np)
    elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and not isinstance(data, np.ndarray):
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "O":
        raise TypeError(f"could not make a tensor from {type(data).__name__}: ragged or non-numeric data")
    return arr


def _finish(host_or_array: Any, dtype: Any, dev: device, requires_grad: bool, copy: bool) -> Tensor:
    backend = dev.backend
    np_dtype = None if dtype is None else _dt.as_dtype(dtype).np
    a = host_or_array
    if np_dtype is not None and a.dtype != np_dtype:
        a = a.astype(np_dtype)
        copy = False
    _dt.from_numpy_dtype(a.dtype)  # refuses unsupported dtypes with a clear message
    if isinstance(a, np.ndarray) and dev is not cpu:
        a = backend.asarray(a)
        copy = False
    if copy:
        a = backend.copy(a)
    return _leaf(a, dev, requires_grad)


def _leaf(array: Any, dev: device, requires_grad: bool) -> Tensor:
    """A new leaf tensor around ``array``; ``requires_grad`` goes through the property, which refuses
    non-float dtypes."""
    t = _wrap(array, dev)
    if requires_grad:
        t.requires_grad = True
    return t


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences, scalars, arrays or tensors), on ``device``,
    else the default device where ``set_default_device`` set one, else ``data``'s device (a tensor) or CPU."""
    device = device if device is not None else explicit_default_device()
    dev = as_device(device) if device is not None else (
        data._device if isinstance(data, Tensor) else cpu)
    src = data.array if isinstance(data, Tensor) and data._device is dev else _infer_numpy(data, dtype)
    return _finish(src, dtype, dev, requires_grad, copy=True)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory where dtype and device allow."""
    device = device if device is not None else explicit_default_device()
    if isinstance(data, Tensor) and (dtype is None or _dt.as_dtype(dtype).np == data.array.dtype) and \
            (device is None or as_device(device) is data._device):
        return data
    dev = as_device(device) if device is not None else (
        data._device if isinstance(data, Tensor) else cpu)
    src = data.array if isinstance(data, Tensor) and data._device is dev else _infer_numpy(data, dtype)
    return _finish(src, dtype, dev, False, copy=False)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing ``array``'s memory and dtype."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dt.from_numpy_dtype(array.dtype)
    return _wrap(array, cpu)


def _factory(fill: str, size: tuple, dtype: Any, device: Any, requires_grad: bool,
             value: Any = None) -> Tensor:
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    shape = _new_shape(size, fill)
    b = dev.backend
    if fill == "full":
        a = b.full(shape, value, dt.np)
    else:
        a = getattr(b, fill)(shape, dt.np)
    return _leaf(a, dev, requires_grad)


_Creation = TypeVar("_Creation", bound=Callable[..., Tensor])


def _sizes_or_keyword(args: tuple, size: Any, name: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``, as PyTorch's size arguments."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (tuple(size),)


def _with_out(fn: _Creation) -> _Creation:
    """PyTorch's ``out=`` keyword for a creation function: the result (in ``out``'s dtype and device unless
    others are asked for) is written into ``out``, which is resized when its shape differs, and returned."""
    @functools.wraps(fn)
    def wrapper(*args: Any, out: Tensor | None = None, **kwargs: Any) -> Tensor:
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn.__name__}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if out.requires_grad:
            raise RuntimeError(f"{fn.__name__}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        elif _dt.as_dtype(kwargs["dtype"]) is not out.dtype:
            raise RuntimeError(f"dtype {_dt.as_dtype(kwargs['dtype'])} does not match dtype of out parameter "
                               f"({out.dtype})")
        kwargs.setdefault("device", out._device)
        result = fn(*args, **kwargs)
        if result._device is not out._device:
            raise RuntimeError(f"Expected out tensor to be on {result._device}, but it is on {out._device}")
        if result.shape == out.shape:
            out._device.backend.copy_into(out.array, result.array)
        else:  # PyTorch resizes out to the result's shape
            out.array = result.array
        _bump_version(out)
        return out
    return wrapper  # type: ignore[return-value]


@_with_out
def zeros(*args: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    return _factory("zeros", _sizes_or_keyword(args, size, "zeros"), dtype, device, requires_grad)


@_with_out
def ones(*args: Any, size: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    return _factory("ones", _sizes_or_keyword(args, size, "ones"), dtype, device, requires_grad)


@_with_out
def empty(*args: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    out = _factory("empty", _sizes_or_keyword(args, size, "empty"), dtype, device, requires_grad)
    return out if memory_format is None else _mf.empty_in(out, memory_format)


@_with_out
def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Filled with ``fill_value``; the dtype follows the value (bool, int64, default float) when not given."""
    if dtype is None:
        dtype = _dt._DEFAULT_BY_CATEGORY[_dt.scalar_category(fill_value)]
    return _factory("full", (tuple(size),), dtype, device, requires_grad, fill_value)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[Any, Any]:
    return (dtype or t.dtype), (device or t._device)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _mf.like(input, zeros(input.shape, dtype=dt, device=dev, requires_grad=requires_grad), memory_format)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _mf.like(input, ones(input.shape, dtype=dt, device=dev, requires_grad=requires_grad), memory_format)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _mf.like(input, empty(input.shape, dtype=dt, device=dev, requires_grad=requires_grad), memory_format)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    out = full(input.shape, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)
    return _mf.like(input, out, memory_format)


@_with_out
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """[start, end) in steps; int64 when every bound is an integer, else the default float dtype."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        category = max(_dt.scalar_category(v) for v in (start, end, step))
        dtype = _dt._DEFAULT_BY_CATEGORY[max(category, 1)]
    bounds = float(start), float(end), float(step)
    if bounds[2] == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not (np.isfinite(bounds[0]) and np.isfinite(bounds[1])):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end}")
    if (bounds[1] - bounds[0]) * bounds[2] < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign (start={start}, "
                           f"end={end}, step={step})")
    dt = _dt.as_dtype(dtype)
    dev = as_device(device)
    return _leaf(dev.backend.arange(start, end, step, dt.np), dev, requires_grad)


@_with_out
def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` points from start to end; integer dtypes truncate toward zero, as PyTorch does."""
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    if dt.np == np.bool_:
        raise RuntimeError("\"linspace\" not implemented for 'Bool'")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))  # 0-d tensors, as PyTorch
    dev = as_device(device)
    return _leaf(dev.backend.linspace(start, end, steps, dt.np), dev, requires_grad)


@_with_out
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    m = n if m is None else m
    for what, v in (("n", n), ("m", m)):
        if operator.index(v) < 0:
            raise RuntimeError(f"eye: {what} must be greater or equal to 0, got {v}")
    dev = as_device(device)
    return _leaf(dev.backend.eye(n, m, dt.np), dev, requires_grad)


def _draw(distribution: str, args: tuple, size: Any, generator: Generator | None, dtype: Any, device: Any,
          requires_grad: bool) -> Tensor:
    """Samples of the backend's ``distribution`` (``uniform`` or ``normal``) with parameters 0 and 1, from
    ``generator`` or the device's generator (``manual_seed`` seeds it)."""
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
    name = "rand" if distribution == "uniform" else "randn"
    shape = _new_shape(_sizes_or_keyword(args, size, name), name)
    draw = getattr(dev.backend, distribution)
    return _leaf(draw(shape, 0.0, 1.0, dt.np, stream_of(generator, dev)), dev, requires_grad)


@_with_out
def rand(*args: Any, size: Any = None, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """U[0, 1) from the device's generator (``manual_seed`` seeds it) or ``generator``."""
    return _draw("uniform", args, size, generator, dtype, device, requires_grad)


@_with_out
def randn(*args: Any, size: Any = None, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """N(0, 1) from the device's generator or ``generator``."""
    return _draw("normal", args, size, generator, dtype, device, requires_grad)


@_with_out
def randint(low: int | None = None, high: int | None = None, size: Sequence[int] = (), *,
            generator: Generator | None = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers in [low, high) (``randint(high, size)`` and ``randint(high=h, size=s)`` also work, as in
    PyTorch: low defaults to 0); an integer dtype cannot require grad (PyTorch's RuntimeError), a float one can."""
    if low is None:
        if high is None:
            raise TypeError("randint() missing required argument 'high'")
        low = 0
    elif high is None or isinstance(high, (tuple, list)):
        if high is not None:
            size = high
        low, high = 0, low
    size = _new_shape((tuple(size),), "randint")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.int64
    # Integers are drawn as integers, then cast: randint_like(float_tensor) gives whole floats.
    a = dev.backend.randint(low, high, size, dt.np if dt.category == 1 else np.int64,  # type: ignore[arg-type]
                            stream_of(generator, dev))
    return _leaf(a.astype(dt.np, copy=False), dev, requires_grad)


def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _mf.like(input, rand(input.shape, dtype=dt, device=dev), memory_format)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _mf.like(input, randn(input.shape, dtype=dt, device=dev), memory_format)


def randint_like(input: Tensor, low: int, high: int | None = None, *, dtype: Any = None,
                 device: Any = None, memory_format: Any = None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _mf.like(input, randint(low, high, input.shape, dtype=dt, device=dev), memory_format)


@_with_out
def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    dev = as_device(device)
    dt = _dt.as_dtype(dtype) if dtype is not None else _dt.int64
    if operator.index(n) < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    return _wrap(dev.backend.permutation(n, stream_of(generator, dev)).astype(dt.np, copy=False), dev)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Category indices (int64) drawn from each row of ``input``'s non-negative weights: (C,) -> (num_samples,),
    (N, C) -> (N, num_samples); without ``replacement`` each row's draws are distinct."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if operator.index(num_samples) <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    w = input.array.reshape(-1, input.shape[-1])
    categories = w.shape[1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    B = input._device.backend
    if w.size and not bool(B.all(B.isfinite(w) & (w >= 0), None, False)):  # one host sync: PyTorch checks here too
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    positive = (w > 0).sum(axis=1)
    if w.shape[0] and int(positive.min()) == 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and w.shape[0] and int(positive.min()) < num_samples:
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                           "category to sample)")
    drawn = B.multinomial(w, int(num_samples), replacement, stream_of(generator, input._device))
    return _wrap(drawn.reshape(*input.shape[:-1], int(num_samples)), input._device)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (elementwise; or the number ``p``), else 0, in ``input``'s dtype."""
    dev = input._device
    prob = input.array if p is None else p
    if p is None and input.numel() and not bool(dev.backend.all((prob >= 0) & (prob <= 1), None, False)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    drawn = dev.backend.bernoulli(prob, input.shape, stream_of(generator, dev))
    return _wrap(drawn.astype(input.array.dtype), dev)


def _triangle_indices(name: str, row: int, col: int, offset: int, upper: bool, dtype: Any, device: Any) -> Tensor:
    if row < 0 or col < 0:
        raise RuntimeError(f"{name}: row must be non-negative, got {row}" if row < 0 else
                           f"{name}: col must be non-negative, got {col}")
    dt = _dt.as_dtype(dtype)
    if dt not in (_dt.int32, _dt.int64):
        raise RuntimeError(f"\"{name}\" not implemented for '{dt}'")
    dev = as_device(device)
    return _wrap(dev.backend.astype(dev.backend.triangle_indices(row, col, offset, upper), dt.np), dev)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = _dt.int64, device: Any = None) -> Tensor:
    """(2, N): the row and column indices of the lower triangle of a row x col matrix (diagonal ``offset``
    and below), in row-major order."""
    return _triangle_indices("tril_indices", row, col, offset, False, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = _dt.int64, device: Any = None) -> Tensor:
    """(2, N): the row and column indices of the upper triangle (diagonal ``offset`` and above)."""
    return _triangle_indices("triu_indices", row, col, offset, True, dtype, device)
