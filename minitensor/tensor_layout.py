"""``TensorLayoutMethods``: the ``Tensor`` methods that change a tensor's shape or layout in place. The in-place
shape changes (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``swapaxes_``) re-point ``self`` at the view
the out-of-place op makes, graph node included, so a tensor in a graph stays differentiable as in PyTorch;
``as_strided`` / ``as_strided_``, ``resize_`` / ``resize_as_`` and ``sum_to_size``. ``_F`` is bound by
``tensor.py``."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from .tensor_shape import sizes_of

if TYPE_CHECKING:
    from .tensor import Tensor

_F: Any = None  # minitensor.functional, bound by tensor.py


def _become(self: "Tensor", make: Callable[..., "Tensor"], *args: Any) -> "Tensor":
    """Make self the view ``make(*args)`` of itself (its array, node and view history): PyTorch's in-place
    metadata change; refused first on a leaf that requires grad or a view of one, as PyTorch."""
    from .functional.inplace import check_writable
    check_writable(self)
    view = make(*args)
    target: Any = self  # _gv is a slot that Tensor's annotations leave out
    target.array, target._hv, target._gv = view.array, view._hv, getattr(view, "_gv", None)
    target._view = getattr(target, "_view", None)  # set with _hv (autograd/views.py)
    if view.grad_fn is not None:
        self.grad_fn = view.grad_fn
    from .tensor import _bump_version
    _bump_version(self)
    return self


def t_(self: "Tensor") -> "Tensor":
    return _become(self, self.t)


def transpose_(self: "Tensor", dim0: int, dim1: int) -> "Tensor":
    return _become(self, self.transpose, dim0, dim1)


def swapaxes_(self: "Tensor", axis0: int, axis1: int) -> "Tensor":
    return _become(self, self.transpose, axis0, axis1)


def swapdims_(self: "Tensor", dim0: int, dim1: int) -> "Tensor":
    return _become(self, self.transpose, dim0, dim1)


def squeeze_(self: "Tensor", dim: Any = None) -> "Tensor":
    return _become(self, self.squeeze, dim)


def unsqueeze_(self: "Tensor", dim: int) -> "Tensor":
    return _become(self, self.unsqueeze, dim)


def as_strided(self: "Tensor", size: Any, stride: Any, storage_offset: int | None = None) -> "Tensor":
    """A view of self's storage at (size, stride, storage_offset) in elements (``minitensor.as_strided``)."""
    return _F.as_strided(self, size, stride, storage_offset)


def as_strided_(self: "Tensor", size: Any, stride: Any, storage_offset: int | None = None) -> "Tensor":
    return _become(self, as_strided, self, size, stride, storage_offset)


def sum_to_size(self: "Tensor", *size: Any) -> "Tensor":
    """The sum of self down to ``size``, to which self's shape must broadcast (the reverse of ``expand``)."""
    shape = tuple(sizes_of(size))
    lead = self.ndim - len(shape)
    if lead < 0 or any(s not in (1, n) for s, n in zip(shape, self.shape[lead:])):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(self.shape)}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    ones = tuple(i for i, s in enumerate(shape) if s == 1 and out.shape[i] != 1)
    return out.sum(ones, keepdim=True) if ones else out


def resize_(self: "Tensor", *sizes: Any, memory_format: Any = None) -> "Tensor":
    """Give self ``sizes``: its first elements (in memory order) when it shrinks, the same memory when
    contiguous; uninitialised memory after the old elements when it grows. Refused when self requires grad."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(sizes_of(sizes))
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    flat, numel = self.reshape(-1), math.prod(shape)
    if numel <= flat.numel():
        new = flat[:numel].reshape(shape)
    else:
        new = self.new_empty(shape)
        new.view(-1)[:flat.numel()] = flat
    self.array = new.array
    from .tensor import _bump_version
    _bump_version(self)
    return self


def resize_as_(self: "Tensor", the_template: "Tensor", memory_format: Any = None) -> "Tensor":
    return resize_(self, the_template.shape)


class TensorLayoutMethods:
    __slots__ = ()


for _method in (as_strided, as_strided_, t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_, sum_to_size,
                resize_, resize_as_):
    setattr(TensorLayoutMethods, _method.__name__, _method)
