"""``minitensor.autograd.Variable``: PyTorch's deprecated wrapper, kept so that old programs (the GAN zoo's
``Variable(imgs.type(Tensor))``) run. Since PyTorch 0.4 every tensor is a Variable: calling it returns a
tensor sharing ``data``'s memory, detached from its graph, with ``requires_grad`` as asked; ``isinstance(t,
Variable)`` holds for every tensor, through the metaclass, as PyTorch's ``VariableMeta`` does."""
from __future__ import annotations

import warnings
from typing import Any


class VariableMeta(type):
    """Makes ``isinstance(x, Variable)`` mean ``isinstance(x, Tensor)``."""

    def __instancecheck__(cls, other: Any) -> bool:
        from ..tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: ``data.detach()`` with ``requires_grad`` set;
    ``Variable()`` is an empty float tensor, as PyTorch's."""

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        from ..creation import empty
        from ..tensor import Tensor
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            return empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


__all__ = ["Variable", "VariableMeta"]
