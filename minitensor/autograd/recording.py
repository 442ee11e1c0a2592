"""``Rec``: what an op's backward body sees as an array under ``create_graph=True`` (docs/architecture.md,
"Higher-order gradients").

Backward bodies are written once, on raw backend arrays with NumPy's API. To differentiate them, the engine
runs the same bodies on ``Rec`` objects: a NumPy-API facade over a Tensor whose every operation is one of
minitensor's differentiable ops, so the backward pass is itself recorded. What NumPy would do in place
(``a += b``, ``a[i] = v``, ``out=``) is done out of place and rebinds the facade; a facade made by a view
(basic indexing, reshape, a transpose) writes its new value back into the facade it views, so the NumPy
idiom ``base[i] += v`` keeps its meaning. Comparisons give facades over constants (they have no gradient).
``__array__`` is refused and ``__array_ufunc__`` is None: NumPy can neither turn a facade into a constant
nor compute on it behind the graph's back (its operators defer to ours).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import minitensor as mt
import minitensor.functional as F
from ..functional.indexing import GetItem, IndexPut
from .. import dtypes as _dt
from ..tensor import Tensor, _wrap

__all__ = ["Rec", "Unrecordable", "tensor_of", "unwrap", "has_rec"]

_SCALARS = (bool, int, float, complex)
_BASIC = (int, slice, type(None), type(Ellipsis))


class Unrecordable(TypeError):
    """A backward body computed on a facade with something that cannot be recorded (an array function
    without a differentiable counterpart, or NumPy itself through ``__array__``)."""


class _MissingAttribute(Unrecordable, AttributeError):
    """An array attribute the facade does not have: an AttributeError too, so ``getattr(a, name, default)``
    and ``hasattr`` keep working."""


class Rec:
    """A Tensor seen through NumPy's array API (``t``: the tensor); see the module's docstring."""

    __slots__ = ("t", "_base", "_writeback", "_synced", "_key")
    __array_ufunc__ = None  # NumPy's operators return NotImplemented, so Python calls ours
    __array_priority__ = 1e6  # CuPy's operators defer to the operand of higher priority
    __hash__ = object.__hash__

    def __init__(self, t: Tensor, base: "Rec | None" = None,
                 writeback: Callable[[Tensor, Tensor], Tensor] | None = None, key: Any = None) -> None:
        self.t, self._base, self._writeback, self._key = t, base, writeback, key
        self._synced: Tensor | None = None

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise Unrecordable("a backward body turned a recorded array into a constant (np.asarray or a NumPy "
                           "function) under create_graph=True; use the backend's methods (B.<op>) instead")

    def __repr__(self) -> str:
        return f"Rec({self.t!r})"

    def __getattr__(self, name: str) -> Any:  # an array attribute the facade lacks (strides, flags...)
        raise _MissingAttribute(f"the array attribute .{name}")

    # ------------------------------------------------------------------ what NumPy tells about an array
    @property
    def shape(self) -> tuple[int, ...]:
        return self.t.array.shape

    @property
    def dtype(self) -> np.dtype:
        return self.t.array.dtype

    @property
    def ndim(self) -> int:
        return self.t.array.ndim

    @property
    def size(self) -> int:
        return self.t.array.size

    @property
    def itemsize(self) -> int:
        return self.t.array.itemsize

    @property
    def base(self) -> None:
        return None  # a facade is never a NumPy view of an array the engine could write into

    def __len__(self) -> int:
        return len(self.t.array)

    def __bool__(self) -> bool:
        return bool(self.t.array)

    def item(self) -> Any:
        return self.t.array.item()

    def any(self, *args: Any, **kwargs: Any) -> Any:
        return self.t.array.any(*args, **kwargs)

    def all(self, *args: Any, **kwargs: Any) -> Any:
        return self.t.array.all(*args, **kwargs)

    def argmax(self, *args: Any, **kwargs: Any) -> Any:
        return self.t.array.argmax(*args, **kwargs)

    def argmin(self, *args: Any, **kwargs: Any) -> Any:
        return self.t.array.argmin(*args, **kwargs)

    def nonzero(self) -> Any:
        return self.t.array.nonzero()

    # ------------------------------------------------------------------ in-place writes, out of place
    def assign(self, new: Tensor) -> "Rec":
        """Make ``new`` this facade's value (cast to its dtype, as NumPy's in-place ops do), and write it
        back into the facade this one is a view of."""
        if new.array.dtype != self.t.array.dtype:
            new = F.to_dtype(new, _dt.from_numpy_dtype(self.t.array.dtype))
        if new.array.shape != self.t.array.shape:
            new = F.broadcast_to(new, self.t.array.shape)
        self.t = new
        base = self._base
        if base is not None:
            if self._writeback is None:
                raise RuntimeError("create_graph=True: a backward body wrote in place into a broadcast or "
                                   "diagonal view; write into its base array instead")
            base.assign(self._writeback(base.t, new))
            self._synced = new
        return self

    def _iop(self, op: Callable[[Any, Any], Any], other: Any) -> "Rec":
        return self.assign(op(self.t, tensor_of(other, self.t)))

    def __iadd__(self, other: Any) -> "Rec":
        return self._iop(lambda a, b: a + b, other)

    def __isub__(self, other: Any) -> "Rec":
        return self._iop(lambda a, b: a - b, other)

    def __imul__(self, other: Any) -> "Rec":
        return self._iop(lambda a, b: a * b, other)

    def __itruediv__(self, other: Any) -> "Rec":
        return self._iop(lambda a, b: a / b, other)

    def __ipow__(self, other: Any) -> "Rec":
        return self._iop(lambda a, b: a ** b, other)

    def __getitem__(self, index: Any) -> "Rec":
        index = _index(index)
        items = index if type(index) is tuple else (index,)
        basic = all(isinstance(i, _BASIC) for i in items)
        out = GetItem.apply(self.t, index, basic)
        if not basic:  # NumPy's advanced indexing gives a copy: writes into it stay there
            return Rec(out)
        return Rec(out, self, lambda base, new: put(base, index, new), index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if type(value) is Rec and value._base is self and value._key is index and value.t is value._synced:
            return  # ``a[i] += v``: the view already wrote its new value back
        self.assign(put(self.t, _index(index), tensor_of(value, self.t)))

    def fill(self, value: Any) -> None:
        self.assign(mt.full_like(self.t, value))

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, other: Any) -> "Rec":
        return Rec(self.t + tensor_of(other, self.t))

    def __radd__(self, other: Any) -> "Rec":
        return Rec(tensor_of(other, self.t) + self.t)

    def __sub__(self, other: Any) -> "Rec":
        return Rec(self.t - tensor_of(other, self.t))

    def __rsub__(self, other: Any) -> "Rec":
        return Rec(tensor_of(other, self.t) - self.t)

    def __mul__(self, other: Any) -> "Rec":
        return Rec(self.t * tensor_of(other, self.t))

    def __rmul__(self, other: Any) -> "Rec":
        return Rec(tensor_of(other, self.t) * self.t)

    def __truediv__(self, other: Any) -> "Rec":
        return Rec(self.t / tensor_of(other, self.t))

    def __rtruediv__(self, other: Any) -> "Rec":
        return Rec(tensor_of(other, self.t) / self.t)

    def __pow__(self, other: Any) -> "Rec":
        return Rec(self.t ** tensor_of(other, self.t))

    def __rpow__(self, other: Any) -> "Rec":
        return Rec(F.pow(tensor_of(other, self.t), self.t))

    def __matmul__(self, other: Any) -> "Rec":
        return Rec(F.matmul(self.t, tensor_of(other, self.t)))

    def __rmatmul__(self, other: Any) -> "Rec":
        return Rec(F.matmul(tensor_of(other, self.t), self.t))

    def __neg__(self) -> "Rec":
        return Rec(-self.t)

    def __pos__(self) -> "Rec":
        return self

    def __abs__(self) -> "Rec":
        return Rec(F.abs(self.t))

    # ------------------------------------------------------------------ no gradient: constant facades
    def _raw(self, op: Callable[[Any, Any], Any], other: Any) -> "Rec":
        """A comparison or logical op, computed on the raw arrays: a facade over a constant (still a facade,
        so NumPy's in-place idioms on it, ``mask *= g``, keep recording)."""
        return Rec(_wrap(op(self.t.array, unwrap(other)), self.t._device))

    def __eq__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a == b, other)

    def __ne__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a != b, other)

    def __lt__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a < b, other)

    def __le__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a <= b, other)

    def __gt__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a > b, other)

    def __ge__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a >= b, other)

    def __invert__(self) -> "Rec":
        return Rec(_wrap(~self.t.array, self.t._device))

    def __and__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a & b, other)

    __rand__ = __and__

    def __or__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a | b, other)

    __ror__ = __or__

    def __xor__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a ^ b, other)

    __rxor__ = __xor__

    def __floordiv__(self, other: Any) -> Any:
        return self._raw(lambda a, b: a // b, other)

    # ------------------------------------------------------------------ methods
    def astype(self, dtype: Any, copy: bool = True) -> "Rec":
        dt = np.dtype(dtype)
        if dt == self.dtype:
            return Rec(F.clone(self.t)) if copy else self
        return Rec(F.to_dtype(self.t, _dt.from_numpy_dtype(dt)))

    def copy(self) -> "Rec":
        return Rec(F.clone(self.t))

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> "Rec":
        x = self if dtype is None else self.astype(dtype, copy=False)
        return Rec(F.sum(x.t, _axes(axis), keepdims))

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> "Rec":
        return Rec(F.mean(self.t, _axes(axis), keepdims))

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> "Rec":
        return Rec(F.amax(self.t, () if axis is None else axis, keepdims))

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> "Rec":
        return Rec(F.amin(self.t, () if axis is None else axis, keepdims))

    def prod(self, axis: Any = None, keepdims: bool = False) -> "Rec":
        return Rec(F.prod(self.t, axis, keepdims))

    def cumsum(self, axis: int) -> "Rec":
        return Rec(F.cumsum(self.t, axis))

    def reshape(self, *shape: Any, order: str = "C") -> "Rec":
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        before = self.shape
        return Rec(F.reshape(self.t, tuple(shape)), self, lambda base, new: F.reshape(new, before))

    def ravel(self) -> "Rec":
        return self.reshape(-1)

    def transpose(self, *axes: Any) -> "Rec":
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        perm = tuple(axes) if axes else tuple(range(self.ndim))[::-1]
        inverse = tuple(int(i) for i in np.argsort(perm))
        return Rec(F.permute(self.t, perm), self, lambda base, new: F.permute(new, inverse))

    @property
    def T(self) -> "Rec":
        return self.transpose()

    @property
    def mT(self) -> "Rec":
        return self.swapaxes(-1, -2)

    def swapaxes(self, a: int, b: int) -> "Rec":
        perm = list(range(self.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def squeeze(self, axis: Any = None) -> "Rec":
        shape = self.shape
        axes = tuple(i for i, n in enumerate(shape) if n == 1) if axis is None else _axes(axis)
        axes = tuple(a % self.ndim for a in axes)
        return self.reshape(tuple(n for i, n in enumerate(shape) if i not in axes))

    def clip(self, lo: Any = None, hi: Any = None) -> "Rec":
        return Rec(F.clamp(self.t, unwrap_scalar(lo), unwrap_scalar(hi)))

    def dot(self, other: Any) -> "Rec":
        return self @ other

    def conj(self) -> "Rec":
        return self


def put(base: Tensor, index: Any, value: Tensor) -> Tensor:
    """``base`` with ``base[index] = value`` (NumPy's indexing), out of place and differentiable in both."""
    out = F.clone(base)
    if not isinstance(value, Tensor):
        value = _wrap(base._device.backend.asarray(value, base.array.dtype), base._device)
    elif value.array.dtype != base.array.dtype:
        value = F.to_dtype(value, _dt.from_numpy_dtype(base.array.dtype))
    return IndexPut.apply(out, value, index, None)


def _axes(axis: Any) -> Any:
    """NumPy's ``axis`` as minitensor's ``dim``: None (all) stays None, an int or a tuple as it is."""
    if axis is None or isinstance(axis, (int, np.integer)):
        return axis
    return tuple(axis) if len(axis) else None


def _index(index: Any) -> Any:
    """An index with its arrays raw (index arrays carry no gradient)."""
    if type(index) is tuple:
        return tuple(unwrap(i) for i in index)
    return unwrap(index)


def unwrap(x: Any) -> Any:
    """The raw array of a facade or tensor; anything else as it is."""
    if type(x) is Rec:
        return x.t.array
    if isinstance(x, Tensor):
        return x.array
    return x


def unwrap_scalar(x: Any) -> Any:
    """A bound as PyTorch takes it: a facade as its tensor, a NumPy scalar as a Python number."""
    if type(x) is Rec:
        return x.t
    if isinstance(x, np.generic):
        return x.item()
    return x


def tensor_of(x: Any, like: Tensor) -> Any:
    """An operand for a Tensor op: a facade's tensor, a raw array as a constant tensor on ``like``'s device,
    a NumPy scalar as a Python number (PyTorch's weak scalar, as NEP 50's)."""
    if type(x) is Rec:
        return x.t
    if isinstance(x, Tensor) or isinstance(x, _SCALARS):
        return x
    if isinstance(x, np.generic):
        return x.item()
    dev = like._device
    B = dev.backend
    return _wrap(x if type(x) is B.array_type else B.asarray(x), dev)


def has_rec(args: Any) -> bool:
    """Whether a facade is among ``args`` (looking one level into lists and tuples)."""
    for a in args:
        if type(a) is Rec:
            return True
        if type(a) in (list, tuple) and any(type(b) is Rec for b in a):
            return True
    return False
