"""The random family's draws with parameters (the plain ``rand*`` draws are in creation.py): ``normal`` with
PyTorch's four overloads, ``poisson``, and the bodies of the in-place samplers ``Tensor.exponential_``,
``random_``, ``geometric_``, ``cauchy_`` and ``log_normal_``. Each draws through the backend's random methods
from ``generator``'s stream or the device's (``manual_seed`` reproduces it)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import ArrayFunction
from ..backends.base import Backend
from ..creation import _leaf, _new_shape, _sizes_or_keyword
from ..generator import Generator, stream_of
from ..tensor import Tensor, _wrap
from ._util import SCALARS, broadcast_error, torch_dtype_name
from .inplace import copy_

__all__ = ["binomial", "normal", "poisson"]

# C++ names of the dtypes, as random_'s and cauchy_'s errors print them
_CTYPES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
           "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
           "float64": "double"}
# (mantissa digits, largest finite value as an int) of the floats: random_() draws up to 2 ** digits, where
# every integer is exact; from and to - 1 must be finite in the dtype
_FLOATS = {"float16": (11, 65504), "bfloat16": (8, int(3.3895313892515355e38)),
           "float32": (24, int(np.finfo(np.float32).max)), "float64": (53, int(np.finfo(np.float64).max))}


class _Sample(ArrayFunction):
    """A draw whose tensor parameters get zero gradients, as PyTorch's normal and poisson (a sample, not a
    reparameterised one): the output requires grad when a parameter does."""

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        return tuple(B.zeros(gy.shape, gy.dtype) if need else None for need in ctx.needs_input_grad)


class Normal(_Sample):
    """mean + std z, z ~ N(0, 1) of the broadcast shape."""

    @staticmethod
    def forward(ctx: Any, B: Backend, mean: Any, std: Any, shape: tuple[int, ...], dtype: np.dtype,
                rng: Any) -> Any:
        return (B.normal(shape, 0.0, 1.0, dtype, rng) * std + mean).astype(dtype, copy=False)


class Poisson(_Sample):
    @staticmethod
    def forward(ctx: Any, B: Backend, rates: Any, rng: Any) -> Any:
        return B.poisson(rates, rng)


class StandardGamma(ArrayFunction):
    """x ~ Gamma(alpha, 1), reparameterised: dx/dalpha is the implicit gradient at x (PyTorch's
    ``_standard_gamma``, whose backward is ``_standard_gamma_grad``)."""

    @staticmethod
    def forward(ctx: Any, B: Backend, alpha: Any, rng: Any) -> Any:
        x = B.standard_gamma(alpha, rng)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, B: Backend, gy: Any) -> Any:
        alpha, x = ctx.saved_arrays
        return gy * B.standard_gamma_grad(alpha, x), None


def standard_gamma(alpha: Tensor, generator: Generator | None = None) -> Tensor:
    """Gamma(alpha, 1) draws of alpha's shape and dtype, differentiable with respect to alpha."""
    return StandardGamma.apply(alpha, stream_of(generator, alpha._device))


class Binomial(_Sample):
    """Binomial(count, prob) successes per element, broadcast, in count's dtype."""

    @staticmethod
    def forward(ctx: Any, B: Backend, count: Any, prob: Any, rng: Any) -> Any:
        xp = B.xp
        shape = np.broadcast_shapes(count.shape, prob.shape)
        c, p = xp.broadcast_to(count, shape), xp.broadcast_to(prob, shape)
        undefined = xp.isnan(c) | xp.isnan(p)
        # PyTorch checks nothing: count is floored at 0 and prob clamped to [0, 1]; a NaN parameter gives NaN
        # counts past 2^62 (inf included) are drawn at 2^62: an int64 cast of inf would be negative
        n = xp.where(undefined, 0, xp.clip(xp.floor(c), 0, 2.0 ** 62)).astype(np.int64)
        q = xp.where(undefined, 0, xp.clip(p, 0, 1)).astype(np.float64)
        drawn = xp.asarray((rng or B.get_rng()).binomial(n, q), dtype=count.dtype)
        return xp.where(undefined, xp.asarray(np.nan, dtype=count.dtype), drawn)


def _std_checked(std: Any) -> None:
    if isinstance(std, Tensor):
        if std.numel() and not bool((std >= 0).all()):  # one host sync, as PyTorch's check
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(mean: Any, std: Any = 1.0, size: Sequence[int] | None = None, *, generator: Generator | None = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """N(mean, std) samples: ``normal(Tensor, Tensor)`` (broadcast), ``normal(Tensor, float)``,
    ``normal(float, Tensor)`` (the tensor's shape and dtype), or ``normal(float, float, size)`` (the default
    float dtype unless ``dtype``). mean and std get zero gradients, as PyTorch."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None or not all(isinstance(v, SCALARS) for v in (mean, std)):
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}): with no tensor, give "
                            "(float mean, float std, tuple of ints size)")
        _std_checked(std)
        from ..device import as_device
        dev = as_device(device)
        dt = _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()
        shape = _new_shape(_sizes_or_keyword((), size, "normal"))
        return _leaf(dev.backend.normal(shape, float(mean), float(std), dt.np, stream_of(generator, dev)), dev,
                     requires_grad)
    if size is not None:
        raise TypeError("normal() received an invalid combination of arguments - got (Tensor, ..., tuple): "
                        "size goes with a float mean and std only")
    dt = tensors[0].dtype if len(tensors) == 1 else _dt.result_type(*tensors)
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{torch_dtype_name(dt)}'")
    _std_checked(std)
    shapes = [t.shape for t in tensors]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise broadcast_error(shapes) from None
    dev = tensors[0]._device
    mean, std = (v.to(dt) if isinstance(v, Tensor) else float(v) for v in (mean, std))
    return Normal.apply(mean, std, shape, dt.np, stream_of(generator, dev))


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson(rate) counts for each rate of ``input`` (float dtypes; the counts in input's dtype)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{torch_dtype_name(input.dtype)}'")
    if input.numel() and not bool((input >= 0).all()):  # nan fails too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return Poisson.apply(input, stream_of(generator, input._device))


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Binomial(floor(count), prob) draws, count and prob broadcast (floating, one dtype); the result in
    count's dtype, zero gradients as ``poisson``. As PyTorch, nothing is checked: a negative count draws 0,
    prob is clamped to [0, 1], a NaN parameter gives NaN."""
    for name, position, t in (("count", 1, count), ("prob", 2, prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(t).__name__}")
    if not count.is_floating_point():
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{torch_dtype_name(count.dtype)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {torch_dtype_name(prob.dtype)} but expected {torch_dtype_name(count.dtype)}")
    return Binomial.apply(count, prob, stream_of(generator, count._device))


# --------------------------------------------------------------------- the in-place samplers' bodies
def _fill(self: Tensor, array: Any) -> Tensor:
    """Write a draw into ``self`` (PyTorch's in-place checks: a leaf that requires grad refuses)."""
    return copy_(self, _wrap(array, self._device))


def _continuous(name: str, self: Tensor, ctype_error: bool) -> None:
    if not self.is_floating_point():
        kind = _CTYPES[self.dtype.name] if ctype_error else torch_dtype_name(self.dtype)
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {kind}")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill with Exp(lambd) samples (density lambd exp(-lambd x))."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous("Exponential", self, False)
    B = self._device.backend
    return _fill(self, B.exponential(self.shape, lambd, self.array.dtype, stream_of(generator, self._device)))


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype is _dt.bool:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    B = self._device.backend
    return _fill(self, B.geometric(self.shape, p, self.array.dtype, stream_of(generator, self._device)))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with Cauchy(median, sigma) samples (density 1 / (pi sigma (1 + ((x - median) / sigma)^2)))."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous("Cauchy", self, True)
    B = self._device.backend
    return _fill(self, B.cauchy(self.shape, median, sigma, self.array.dtype, stream_of(generator, self._device)))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """Fill with exp(N(mean, std)) samples."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    if not self.is_floating_point():
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{torch_dtype_name(self.dtype)}'")
    B = self._device.backend
    z = B.normal(self.shape, mean, std, self.array.dtype, stream_of(generator, self._device))
    return _fill(self, B.exp(z))


def _random_bounds(dtype: _dt.dtype, args: tuple, kwargs: dict) -> tuple[int, int]:
    """[low, high) of ``random_``: ``random_()`` every integer the dtype holds exactly from 0 (to 2^digits for
    floats, the maximum for integers, 1 for bool), ``random_(to)``, ``random_(from, to)``; to=None means the
    same top as ``random_()``."""
    unknown = set(kwargs) - {"from", "to"}
    if unknown or len(args) + len(kwargs) > 2:
        raise TypeError(f"random_() takes (from, to), (to) or nothing; got {len(args)} positional arguments and "
                        f"keywords {sorted(kwargs)}")
    if len(args) == 1 and "from" not in kwargs:
        low, to = 0, args[0]
    else:
        named = dict(zip(("from", "to"), args), **kwargs)
        low, to = named.get("from", 0), named.get("to")
    name = dtype.name
    if name == "bool":
        lowest, highest, top = 0, 1, 1
    elif dtype.is_floating_point:
        digits, largest = _FLOATS[name]
        lowest, highest, top = -largest, largest, 2 ** digits
    else:
        lowest, highest = int(np.iinfo(dtype.np).min), int(np.iinfo(dtype.np).max)
        top = highest
    high = top + 1 if to is None else int(to)
    low = int(low)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if not lowest <= low <= highest:
        raise RuntimeError(f"from is out of bounds for {_CTYPES[name]}")
    if not lowest <= high - 1 <= highest:
        raise RuntimeError(f"to - 1 is out of bounds for {_CTYPES[name]}")
    return low, high


def random_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill with integers drawn uniformly from [from, to) (see ``_random_bounds`` for the defaults)."""
    low, high = _random_bounds(self.dtype, args, kwargs)
    B = self._device.backend
    drawn = B.randint(low, high, self.shape, np.dtype(np.int64), stream_of(generator, self._device))
    return _fill(self, drawn.astype(self.array.dtype))
