"""PyTorch's ``torch.compile`` and ``torch.compiler`` names, so scripts that compile their model run unchanged.

minitensor has no graph compiler: ops already run as whole-array backend calls and fused kernels where a
benchmark showed they pay (docs/performance.md). ``compile(model)`` therefore checks its arguments as
PyTorch does and returns ``model`` itself, which computes exactly what a compiled model would
(docs/differences.md).
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def compile(model: _Fn | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable | None = None, mode: str | None = None,
            options: dict[str, Any] | None = None, disable: bool = False, **kwargs: Any) -> Any:
    """``torch.compile``: returns ``model`` unchanged (a module or a function); without ``model``, a decorator
    that does the same. ``mode`` and ``options`` together raise PyTorch's RuntimeError."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable, **kwargs)
    if not callable(model):  # PyTorch's assertion, its type and words
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    return model


def disable(fn: _Fn | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """``torch.compiler.disable``: nothing is compiled here, so ``fn`` (or, without it, a no-op decorator)."""
    return (lambda f: f) if fn is None else fn


def is_compiling() -> bool:
    """False: code never runs under a compiler's tracing here."""
    return False


is_dynamo_compiling = is_compiling


def reset() -> None:
    """``torch.compiler.reset``: there are no compilation caches to clear."""
