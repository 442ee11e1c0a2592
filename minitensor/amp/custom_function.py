"""PyTorch's ``torch.amp.custom_fwd`` / ``custom_bwd``: decorators for a custom ``autograd.Function``'s
``forward`` and ``backward`` under autocast. ``custom_fwd`` notes the autocast state on ctx (and with
``cast_inputs=dtype`` runs forward with autocast off, its floating inputs on that device cast to dtype);
``custom_bwd`` runs backward in the state forward saw."""
from __future__ import annotations

import functools
from typing import Any, Callable

from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from .. import dtypes as _dt


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """Floating tensors on ``device_type`` (not float64) in ``value`` (nested tuples, lists, dicts) cast to dtype."""
    if isinstance(value, (tuple, list)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    if hasattr(value, "is_floating_point") and value.is_floating_point() and value.device.type == device_type \
            and value.dtype != _dt.float64:
        return value.to(dtype)
    return value


def _check_device_type(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorate a custom Function's ``forward`` (``ctx`` first) for autocast regions."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = enabled and cast_inputs is None
        if cast_inputs is None or not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate a custom Function's ``backward``: it runs under the autocast state its forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
