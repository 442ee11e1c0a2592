"""``Parameter``: a Tensor that a ``Module`` registers as one of its learnable weights; ``Buffer``: one it
registers as state; ``UninitializedParameter`` and ``UninitializedBuffer``: a lazy module's, before its first
forward gives them a shape."""
from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor, _wrap
from ..creation import empty


class Parameter(Tensor):
    """A leaf tensor that ``Module.__setattr__`` registers in ``_parameters``.

    ``Parameter(data, requires_grad=True)`` shares ``data``'s array (no copy) and is detached from any
    graph ``data`` belongs to, as in PyTorch. ``Parameter()`` holds an empty float tensor.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter needs a Tensor as data, got {type(data).__name__}")
        p = object.__new__(cls)
        p.array, p._device = data.array, data._device
        p._requires_grad, p.grad, p.grad_fn, p._vc, p._hv = False, None, None, None, None
        p.requires_grad = requires_grad  # the setter refuses integer dtypes
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happened in __new__ (Tensor.__init__ would copy the data)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> "Parameter":
        if id(self) in memo:
            return memo[id(self)]
        copy = Parameter(self.detach().clone(), self._requires_grad)  # clone: a copy in the same layout
        if self.grad is not None:
            copy.grad = self.grad.detach().clone()
        memo[id(self)] = copy
        return copy

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.detach(), self._requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


_ARRAY = Tensor.__dict__["array"]  # the slot itself: the uninitialized classes below hide it behind a property
_USE_ERROR = ("Attempted to use an uninitialized parameter. This error happens when you are using a `LazyModule` "
              "or explicitly manipulating `minitensor.nn.parameter.{}` objects. When using LazyModules Call "
              "`forward` with a dummy batch to initialize the parameters before calling minitensor functions")
_SHAPE_ERROR = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                "`forward` to initialize the parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet: it holds only a dtype and a device (an empty
    array), which ``to``/``cpu``/``cuda``/``float``... change. Every op reads a tensor's ``array``, which here
    raises ValueError (PyTorch refuses every torch function the same way); ``shape`` raises RuntimeError.
    ``materialize(shape)`` gives it an uninitialized array of that shape and makes it ``cls_to_become``.
    """

    __slots__ = ()
    cls_to_become: type

    @property
    def array(self) -> Any:
        raise ValueError(_USE_ERROR.format(type(self).__name__))

    @array.setter
    def array(self, value: Any) -> None:
        _ARRAY.__set__(self, value)

    @property
    def shape(self) -> Any:
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim: int | None = None) -> Any:
        raise RuntimeError(_SHAPE_ERROR)

    @property
    def dtype(self) -> Any:
        return self._empty().dtype

    def is_floating_point(self) -> bool:
        return self._empty().is_floating_point()

    @property
    def requires_grad(self) -> bool:
        return bool(_untyped(self)._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._empty().requires_grad = value  # the dtype check
        _untyped(self)._requires_grad = bool(value)

    @property
    def data(self) -> Any:
        return self

    @data.setter
    def data(self, value: Tensor) -> None:
        source = value._empty() if isinstance(value, UninitializedTensorMixin) else value.detach()
        _ARRAY.__set__(self, source.array)
        _untyped(self)._device = source.device

    def _empty(self) -> Tensor:
        """The empty tensor that carries the dtype and device."""
        return _wrap(_ARRAY.__get__(self), _untyped(self)._device)

    def to(self, *args: Any, **kwargs: Any) -> Any:
        """An uninitialized one of the converted dtype / device (self when nothing changes)."""
        moved = self._empty().to(*args, **kwargs)
        if moved.dtype == self.dtype and moved.device == self._empty().device:
            return self
        return _untyped(type(self))(self.requires_grad, moved.device, moved.dtype)

    def cpu(self) -> Any:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Any:
        return self.to(self._empty().cuda(device).device)

    def float(self) -> Any:
        return self.to(_dt.float32)

    def double(self) -> Any:
        return self.to(_dt.float64)

    def half(self) -> Any:
        return self.to(_dt.float16)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become ``cls_to_become`` with an uninitialized array of ``shape`` (this object, so the module and
        any optimizer that holds it see the change)."""
        me = _untyped(self)
        data = empty(shape, device=me._device if device is None else device,
                     dtype=self.dtype if dtype is None else dtype)
        me.__class__ = self.cls_to_become
        me.array, me._device = data.array, data.device

    def share_memory_(self) -> Any:
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = _untyped(type(self))(self.requires_grad, self._empty().device, self.dtype)
        return memo[id(self)]


def _untyped(x: Any) -> Any:
    """``x`` for attributes the mixin's own type (slots, no annotations) does not declare."""
    return x


def _new_uninitialized(cls: type, requires_grad: bool, device: Any, dtype: Any) -> Any:
    data = empty(0, device=device, dtype=dtype)
    t: Any = object.__new__(cls)
    _ARRAY.__set__(t, data.array)
    t._device, t._requires_grad, t.grad, t.grad_fn, t._vc, t._hv = data.device, False, None, None, None, None
    t.requires_grad = requires_grad
    return t


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's, until its first forward)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> "UninitializedParameter":
        return _new_uninitialized(cls, requires_grad, device, dtype)

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; becomes a plain Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None,
                dtype: Any = None) -> "UninitializedBuffer":
        return _new_uninitialized(cls, requires_grad, device, dtype)

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None) -> None:
        pass


class Buffer(Tensor):
    """A tensor that ``Module.__setattr__`` registers in ``_buffers`` (PyTorch 2.x's ``nn.Buffer``):
    ``self.stats = nn.Buffer(t, persistent=False)`` is ``self.register_buffer("stats", t, False)``.

    It shares ``data``'s memory and version counter, detached from its graph, and keeps ``requires_grad``.
    PyTorch returns a plain Tensor flagged as a buffer; here the type is ``Buffer`` (a Tensor subclass),
    since minitensor's tensors have slots, not a ``__dict__`` for the flag (docs/differences.md).
    """

    __slots__ = ("persistent",)
    persistent: bool

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> "Buffer":
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer needs a Tensor as data, got {type(data).__name__}")
        b = object.__new__(cls)
        b.array, b._device = data.array, data._device
        b._requires_grad, b.grad, b.grad_fn, b._hv = False, None, None, None
        b._vc = data.detach()._vc  # detach(): the same counter, as PyTorch's data.detach()
        b.requires_grad = data.requires_grad
        b.persistent = bool(persistent)
        return b

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass  # everything happened in __new__ (Tensor.__init__ would copy the data)
