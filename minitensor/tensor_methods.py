"""``TensorMethods``: the operators and op methods of ``Tensor`` (its base class), each a thin call into
``minitensor.functional``, where the differentiable ops live.

``_F`` is bound to ``minitensor.functional`` by ``tensor.py`` once ``Tensor`` exists (the ops import it), so
that a method call costs one global lookup, not an import. The hottest methods (``t + u``, ``t * u``,
``t.exp()``...: FUNCTIONAL_METHODS) are then the functional functions themselves, bound by
``bind_functional``: one Python call less per op (~0.1 us, a few % of ``benchmarks/overhead.py``).
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from . import dtypes as _dt
from .tensor_math import TensorMathMethods

if TYPE_CHECKING:
    from .tensor import Tensor
    from .size import Size

_F: Any = None  # minitensor.functional, bound by tensor.py
_C: Any = None  # minitensor.creation, bound by tensor.py (the new_* methods)
_L: Any = None  # minitensor.legacy, bound by tensor.py (type())


def _named(name: str, method: Callable[[TensorMethods], Tensor]) -> Callable[[TensorMethods], Tensor]:
    method.__name__, method.__qualname__ = name, f"TensorMethods.{name}"
    return method


def _cast(name: str, dtype: _dt.dtype) -> Callable[[TensorMethods], Tensor]:
    """The method ``t.<name>()``: ``t.to(dtype)``."""
    return _named(name, lambda self: self.to(dtype))


class TensorMethods(TensorMathMethods):
    """What ``Tensor`` does through ``minitensor.functional``: arithmetic, in-place updates, math, reductions
    and shape methods."""

    __slots__ = ()  # Tensor's own slots hold the state; no __dict__ here
    array: Any
    _device: Any
    if TYPE_CHECKING:  # Tensor's properties and methods that these read
        @property
        def shape(self) -> Size: ...
        @property
        def dtype(self) -> Any: ...
        @property
        def ndim(self) -> int: ...
        @property
        def T(self) -> Tensor: ...
        def to(self, *args: Any, **kwargs: Any) -> Tensor: ...
        def item(self) -> Any: ...




    # ------------------------------------------------------------------------------- arithmetic
    def __radd__(self, other: Any) -> "Tensor":
        return _F.add(other, self)

    def __rsub__(self, other: Any) -> "Tensor":
        return _F.sub(other, self)

    def __rmul__(self, other: Any) -> "Tensor":
        return _F.mul(other, self)

    def __rtruediv__(self, other: Any) -> "Tensor":
        return _F.div(other, self)

    def __floordiv__(self, other: Any) -> "Tensor":
        return _F.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> "Tensor":
        return _F.floor_divide(other, self)

    def __mod__(self, other: Any) -> "Tensor":
        return _F.remainder(self, other)

    def __rmod__(self, other: Any) -> "Tensor":
        return _F.remainder(other, self)

    def __pow__(self, other: Any) -> "Tensor":
        return _F.pow(self, other)

    def __rpow__(self, other: Any) -> "Tensor":
        return _F.pow(other, self)

    def __matmul__(self, other: Any) -> "Tensor":
        return _F.matmul(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return _F.matmul(other, self)

    def __neg__(self) -> "Tensor":
        return _F.neg(self)

    def __pos__(self) -> "Tensor":
        return self  # type: ignore[return-value]

    def __abs__(self) -> "Tensor":
        return _F.abs(self)

    def __eq__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _F.eq(self, other)

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _F.ne(self, other)

    def __lt__(self, other: Any) -> "Tensor":
        return _F.lt(self, other)

    def __le__(self, other: Any) -> "Tensor":
        return _F.le(self, other)

    def __gt__(self, other: Any) -> "Tensor":
        return _F.gt(self, other)

    def __ge__(self, other: Any) -> "Tensor":
        return _F.ge(self, other)

    def __and__(self, other: Any) -> "Tensor":
        return _F.logical_and(self, other) if self.array.dtype == np.bool_ else _F.bitwise_and(self, other)

    def __or__(self, other: Any) -> "Tensor":
        return _F.logical_or(self, other) if self.array.dtype == np.bool_ else _F.bitwise_or(self, other)

    def __xor__(self, other: Any) -> "Tensor":
        return _F.logical_xor(self, other) if self.array.dtype == np.bool_ else _F.bitwise_xor(self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self) -> "Tensor":
        return _F.logical_not(self) if self.array.dtype == np.bool_ else _F.bitwise_not(self)

    # ----------------------------------------------------------------------------------- in place
    def __iadd__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.add, other)

    def __isub__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.sub, other)

    def add_(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.inplace(self, _F.add, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.inplace(self, _F.sub, other, alpha=alpha)

    def mul_(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.mul, other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> "Tensor":
        return _F.inplace(self, _F.div, other, rounding_mode=rounding_mode)

    __imul__, __itruediv__ = mul_, div_

    # Python's other augmented assignments write in place too, as PyTorch's (without them ``x **= 2`` would
    # rebind x to a new tensor, and x's views and a leaf's check would never see the write).
    def __ipow__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.pow, other)

    def __imod__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.remainder, other)

    def __ifloordiv__(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.floor_divide, other)

    def __iand__(self, other: Any) -> "Tensor":
        return _F.inplace(self, type(self).__and__, other)

    def __ior__(self, other: Any) -> "Tensor":
        return _F.inplace(self, type(self).__or__, other)

    def __ixor__(self, other: Any) -> "Tensor":
        return _F.inplace(self, type(self).__xor__, other)

    def pow_(self, other: Any) -> "Tensor":
        return _F.inplace(self, _F.pow, other)

    def float_power_(self, exponent: Any) -> "Tensor":
        """In place: ``self ** exponent`` in float64, so ``self`` must be float64 (PyTorch's rule)."""
        if self.dtype is not _dt.float64:
            from .functional._util import torch_dtype_name
            raise RuntimeError(f"the base given to float_power_ has dtype {torch_dtype_name(self.dtype)} but the "
                               "operation's result requires dtype Double")
        return _F.inplace(self, _F.float_power, exponent)

    def clamp_(self, min: Any = None, max: Any = None) -> "Tensor":
        return _F.inplace(self, _F.clamp, min, max)

    def masked_fill_(self, mask: "Tensor", value: Any) -> "Tensor":
        return _F.inplace(self, _F.masked_fill, mask, value)

    def copy_(self, src: Any) -> "Tensor":
        """Copy ``src`` (broadcast, cast, from any device) into this tensor's memory."""
        return _F.copy_(self, src)

    def fill_(self, value: Any) -> "Tensor":
        return _F.copy_(self, value)

    def zero_(self) -> "Tensor":
        return _F.copy_(self, 0)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> "Tensor":
        from .creation import rand
        return _F.copy_(self, rand(*self.shape, generator=generator, dtype=self.dtype, device=self._device)
                        * (b - a) + a)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> "Tensor":
        from .creation import randn
        return _F.copy_(self, randn(*self.shape, generator=generator, dtype=self.dtype, device=self._device)
                        * std + mean)

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> "Tensor":
        return _F.random.exponential_(self, lambd, generator=generator)

    def geometric_(self, p: float, *, generator: Any = None) -> "Tensor":
        return _F.random.geometric_(self, p, generator=generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> "Tensor":
        return _F.random.cauchy_(self, median, sigma, generator=generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> "Tensor":
        return _F.random.log_normal_(self, mean, std, generator=generator)

    def random_(self, *args: Any, generator: Any = None, **kwargs: Any) -> "Tensor":
        """``random_()``, ``random_(to)``, ``random_(from, to)``: integers drawn uniformly (PyTorch's ranges)."""
        return _F.random.random_(self, *args, generator=generator, **kwargs)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> "Tensor":
        from .creation import multinomial
        return multinomial(self, num_samples, replacement, generator=generator)  # type: ignore[arg-type]

    def bernoulli(self, p: float | None = None, *, generator: Any = None) -> "Tensor":
        from .creation import bernoulli
        return bernoulli(self, p, generator=generator)  # type: ignore[arg-type]

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> "Tensor":
        """Fill with 1 with probability ``p`` (a number or a tensor broadcasting to self), else 0."""
        from .creation import bernoulli, full_like
        prob = p if isinstance(p, type(self)) else full_like(self, p, dtype=_dt.float64)  # type: ignore[arg-type]
        return _F.copy_(self, bernoulli(prob.expand(*self.shape), generator=generator))

    def share_memory_(self) -> "Tensor":
        """Move a CPU tensor's values into shared memory (a no-op when already there, and for CUDA tensors, as
        PyTorch): processes forked afterwards, or sent this tensor, write into the same memory."""
        from .multiprocessing import sharing
        if self._device.type == "cpu" and sharing.block_of(self.array) is None:
            self.array = sharing.to_shared(self.array)
        return self  # type: ignore[return-value]

    def is_shared(self) -> "builtins.bool":
        from .multiprocessing import sharing
        return self._device.type == "cuda" or sharing.block_of(self.array) is not None

    def __format__(self, format_spec: str) -> str:
        """A 0-d tensor formats as its number (``f"{loss:.3f}"``), any other as ``object`` does (PyTorch)."""
        if self.array.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __setitem__(self, index: Any, value: Any) -> None:
        _F.setitem(self, index, value)

    def __getitem__(self, index: Any) -> "Tensor":
        return _F.getitem(self, index)

    # ---------------------------------------------------------------------------- math methods
    def add(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        return _F.sub(self, other, alpha=alpha)

    matmul, neg, abs = __matmul__, __neg__, __abs__
    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def div(self, other: Any, *, rounding_mode: str | None = None) -> "Tensor":
        return _F.div(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent: Any) -> "Tensor":
        return _F.pow(self, exponent)

    if TYPE_CHECKING:  # minitensor.functional's functions themselves at run time (bind_functional)
        def __add__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def mul(self, other: Any) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def log1p(self) -> Tensor: ...
        def expm1(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def rsqrt(self) -> Tensor: ...
        def sign(self) -> Tensor: ...
        def reciprocal(self) -> Tensor: ...
        def sin(self) -> Tensor: ...
        def cos(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def sigmoid(self) -> Tensor: ...
        def relu(self) -> Tensor: ...
        def logical_not(self) -> Tensor: ...
        def isnan(self) -> Tensor: ...
        def isinf(self) -> Tensor: ...
        def isfinite(self) -> Tensor: ...

    def square(self) -> "Tensor":
        return _F.square(self)

    def clamp(self, min: Any = None, max: Any = None) -> "Tensor":
        return _F.clamp(self, min, max)

    clip = clamp

    def maximum(self, other: "Tensor") -> "Tensor":
        return _F.maximum(self, other)

    def minimum(self, other: "Tensor") -> "Tensor":
        return _F.minimum(self, other)

    def where(self, condition: "Tensor", other: Any) -> "Tensor":
        return _F.where(condition, self, other)

    def masked_fill(self, mask: "Tensor", value: Any) -> "Tensor":
        return _F.masked_fill(self, mask, value)

    def gather(self, dim: int, index: "Tensor") -> "Tensor":
        return _F.gather(self, dim, index)

    def softmax(self, dim: int) -> "Tensor":
        return _F.softmax(self, dim)

    def log_softmax(self, dim: int) -> "Tensor":
        return _F.log_softmax(self, dim)

    def index_select(self, dim: int, index: "Tensor") -> "Tensor":
        return _F.index_select(self, dim, index)

    def narrow(self, dim: int, start: Any, length: int) -> "Tensor":
        return _F.narrow(self, dim, start, length)

    # ------------------------------------------------------------------------------ new tensors
    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return _C.tensor(data, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return _C.zeros(*size, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return _C.ones(*size, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def new_full(self, size: Sequence[int], fill_value: Any, dtype: Any = None,
                 requires_grad: bool = False) -> "Tensor":
        return _C.full(size, fill_value, dtype=dtype or self.dtype, device=self._device,
                    requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return _C.empty(*size, dtype=dtype or self.dtype, device=self._device, requires_grad=requires_grad)

    def is_complex(self) -> "builtins.bool":
        """False: minitensor has no complex dtypes."""
        return False

    # ------------------------------------------------ dtype casts (last: their names shadow builtins)
    float = _cast("float", _dt.float32)
    double = _cast("double", _dt.float64)
    half = _cast("half", _dt.float16)
    bfloat16 = _cast("bfloat16", _dt.bfloat16)
    long = _cast("long", _dt.int64)
    int = _cast("int", _dt.int32)
    bool = _cast("bool", _dt.bool)
    byte = _cast("byte", _dt.uint8)
    char = _cast("char", _dt.int8)
    short = _cast("short", _dt.int16)

    def type(self, dtype: Any = None, non_blocking: "builtins.bool" = False) -> Any:
        """Without ``dtype``: PyTorch's type name ('torch.FloatTensor'); with a dtype, a legacy type
        (``mt.DoubleTensor``) or its name ('torch.cuda.DoubleTensor'): this tensor cast (and moved) to it."""
        if dtype is None:
            return _L.legacy_type_name(self)
        dt, device_type = _L.legacy_target(dtype)
        if device_type is not None and device_type != self._device.type:
            return self.to(device_type, dt, non_blocking=non_blocking)
        return self.to(dt, non_blocking=non_blocking)


# method name -> the minitensor.functional function that is the method (its first argument is the tensor)
FUNCTIONAL_METHODS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "mul": "mul",
                      **{name: name for name in (
                          "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sign", "reciprocal", "sin", "cos",
                          "tanh", "sigmoid", "relu", "logical_not", "isnan", "isinf", "isfinite")}}


def bind_functional(functional: Any) -> None:
    """Called by tensor.py once minitensor.functional is imported: ``_F`` and the FUNCTIONAL_METHODS."""
    global _F
    _F = functional
    for method, name in FUNCTIONAL_METHODS.items():
        setattr(TensorMethods, method, getattr(functional, name))
