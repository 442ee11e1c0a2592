"""Whether operations record a graph: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` (thread-local,
as in PyTorch, so a data-loader thread does not switch it for the training loop)."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    grad_enabled = True
    anomaly = False  # the ops' check: anomaly mode on and checking NaN (what the hot paths read)
    anomaly_enabled = False  # set_anomaly_enabled / detect_anomaly, and its check_nan
    anomaly_check_nan = True
    inference = False  # inside inference_mode (is_inference_mode_enabled)


state = _State()


def is_grad_enabled() -> bool:
    return state.grad_enabled


class _GradModeContext:
    """A context manager that is also a decorator, like ``torch.no_grad``."""

    mode: bool

    def __enter__(self) -> None:
        self._prev = state.grad_enabled
        state.grad_enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled = self._prev

    def __call__(self, fn: F) -> F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # A fresh context per call: a decorated function may recurse or run in several threads.
            with (enable_grad() if mode else no_grad()):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Ops inside record no graph: outputs have ``requires_grad=False``."""
    mode = False


class enable_grad(_GradModeContext):
    mode = True


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` as a context manager, a decorator, or a plain call that sets the mode."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = state.grad_enabled
        state.grad_enabled = self.mode  # a plain call takes effect at once, as in PyTorch

    def __enter__(self) -> None:
        pass

    def __call__(self, fn: F) -> F:
        state.grad_enabled = self._prev  # used as a decorator: the switch belongs to each call only
        return super().__call__(fn)


class inference_mode(no_grad):
    """Same as ``no_grad`` in minitensor (PyTorch's extra view/version bookkeeping does not exist here)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = not mode
        self.inference = bool(mode)

    def __enter__(self) -> None:
        super().__enter__()
        self._prev_inference, state.inference = state.inference, self.inference

    def __exit__(self, *exc: Any) -> None:
        state.inference = self._prev_inference
        super().__exit__(*exc)

    def __call__(self, fn: F) -> F:
        inference = self.inference

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(inference):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
