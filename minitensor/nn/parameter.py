"""``Parameter``: a Tensor that a ``Module`` registers as one of its learnable weights; ``Buffer``: one it
registers as state."""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
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
