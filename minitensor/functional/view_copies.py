"""PyTorch's view-copy functions: ``view_copy``, ``permute_copy``, ``t_copy``... each the view op of the same
name without ``_copy``, returning a fresh C-contiguous copy (no memory shared with the input; the gradient
passes through as the view's), made from one table; and ``narrow_copy`` and the ``unsafe_`` splits
(``unsafe_chunk`` / ``unsafe_split`` / ``unsafe_split_with_sizes``: PyTorch's views without view tracking,
the plain splits here)."""
from __future__ import annotations

from typing import Any, Callable

from .. import memory_formats as _mf
from ..tensor import Tensor
from .arrange import split_with_sizes
from .shape import chunk, split

__all__ = ["narrow_copy", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]


def _fresh(t: Tensor) -> Tensor:
    """A C-contiguous copy of ``t`` (differentiable: Clone's gradient passes through)."""
    return _mf.clone(t, _mf.contiguous_format)


def _checked(name: str, input: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def _copy_of(name: str, view: Callable[..., Any]) -> Callable[..., Any]:
    """``name(input, ...)``: ``view(input, ...)`` copied (each piece of a tuple result)."""
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        out = view(_checked(name, input), *args, **kwargs)
        return tuple(map(_fresh, out)) if isinstance(out, (tuple, list)) else _fresh(out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``{view.__name__}`` as a new contiguous tensor (no memory shared with ``input``)."
    return function


def _slice(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
    """``input[..., start:end:step, ...]`` along ``dim`` (ATen's ``slice``)."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = dim % input.ndim if input.ndim else 0
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _view(input: Tensor, *args: Any) -> Tensor:
    return input.view(*args)


def _alias(input: Tensor) -> Tensor:
    return input[...]


# name -> the view it copies, as a Tensor method name (called input.<method>(...)) or a function.
VIEW_COPIES: dict[str, Any] = {
    "view_copy": _view, "permute_copy": "permute", "transpose_copy": "transpose", "t_copy": "t",
    "expand_copy": "expand", "squeeze_copy": "squeeze", "unsqueeze_copy": "unsqueeze", "select_copy": "select",
    "slice_copy": _slice, "diagonal_copy": "diagonal", "unfold_copy": "unfold", "split_copy": "split",
    "split_with_sizes_copy": "split_with_sizes", "unbind_copy": "unbind", "detach_copy": "detach",
    "alias_copy": _alias, "as_strided_copy": "as_strided", "indices_copy": "indices", "values_copy": "values"}


def _method(name: str) -> Callable[..., Any]:
    def view(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(input, name)(*args, **kwargs)
    view.__name__ = name
    return view


for _name, _view_op in VIEW_COPIES.items():
    globals()[_name] = _copy_of(_name, _method(_view_op) if isinstance(_view_op, str) else _view_op)
__all__ += list(VIEW_COPIES)


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``narrow(input, dim, start, length)`` as a new contiguous tensor."""
    return _fresh(_checked("narrow_copy", input).narrow(dim, start, length))


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``chunk`` (PyTorch's form skips view tracking; minitensor's views are the same either way)."""
    return tuple(chunk(_checked("unsafe_chunk", input), chunks, dim))


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``split`` by one size (see ``unsafe_chunk``)."""
    return tuple(split(_checked("unsafe_split", input), split_size, dim))


def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes`` (see ``unsafe_chunk``)."""
    return tuple(split_with_sizes(_checked("unsafe_split_with_sizes", input), split_sizes, dim))
