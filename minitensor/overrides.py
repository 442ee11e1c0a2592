"""``minitensor.overrides``: PyTorch's ``__torch_function__`` queries. minitensor has no
``__torch_function__`` protocol (a Tensor subclass's methods are plain Python overrides), so no argument
ever has an override: the ``has_torch_function`` family answers False, and library code written for
PyTorch takes its ordinary path."""
from __future__ import annotations

from typing import Any, Callable, Iterable, TypeVar

from .tensor import Tensor

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "wrap_torch_function"]

_F = TypeVar("_F", bound=Callable[..., Any])


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    return False


def has_torch_function_unary(arg: Any) -> bool:
    return False


def has_torch_function_variadic(*args: Any) -> bool:
    return False


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """PyTorch's error for arguments without an override (only called after ``has_torch_function``)."""
    raise TypeError(f"no implementation found for '{getattr(public_api, '__qualname__', public_api)}' on types "
                    "that implement __torch_function__: []")


def is_tensor_like(inp: Any) -> bool:
    """A Tensor (or subclass), or an object with a ``__torch_function__`` attribute, as PyTorch tests it."""
    return isinstance(inp, Tensor) or hasattr(inp, "__torch_function__")


def wrap_torch_function(dispatcher: Callable[..., Any]) -> Callable[[_F], _F]:
    """The decorator leaves the function as it is: there is no override to dispatch to."""
    return lambda func: func
