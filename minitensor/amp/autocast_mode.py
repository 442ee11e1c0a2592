"""``autocast``: regions where ops run in PyTorch's mixed-precision policy (``policy.py``).

State is per thread and per device type (PyTorch's): whether autocast is on and its dtype (the CPU's
default bfloat16, CUDA's float16). ``Function.apply`` reads one module global, ``function.autocast``: None
while no thread is inside an enabled autocast region, so ops pay nothing then; otherwise it is
``cast_inputs``, which casts the op's tensor arguments by the table. Casts of leaf tensors that require
grad (the weights) are cached until the outermost region exits, keyed by the tensor's identity, version
and target dtype: one cast per weight per step, however often it is used.
"""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Callable, TypeVar

from .. import dtypes as _dt
from ..autograd import function as _function
from ..autograd.grad_mode import state as _grad_state
from .policy import FP32, LOWER, POLICY

F = TypeVar("F", bound=Callable[..., Any])

_DEVICE_TYPES = ("cpu", "cuda")
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}


class _State(threading.local):
    """One thread's autocast state (threading.local re-runs __init__ in each thread)."""

    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": _dt.bfloat16, "cuda": _dt.float16}
        self.cache_enabled = True
        self.nesting = 0  # entered regions (enabled or not): the cache empties when the last one exits
        self.cache: dict[tuple[int, Any], tuple[Any, int, Any]] = {}


_state = _State()
_lock = threading.Lock()
_active = 0  # enabled regions over all threads; the hook is installed while it is above zero


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: CUDA's, as PyTorch)."""
    return _state.enabled[_device_type(device_type or "cuda")]


def get_autocast_dtype(device_type: str) -> _dt.dtype:
    """The dtype autocast uses on ``device_type`` in this thread."""
    return _state.dtype[_device_type(device_type)]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports ``device_type`` (PyTorch's ``torch.amp.is_autocast_available``)."""
    return device_type in _DEVICE_TYPES


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def clear_autocast_cache() -> None:
    _state.cache.clear()


def cast_early(cls: type, *args: Any) -> tuple[Any, ...]:
    """``args`` cast now by ``cls``'s rule, for the front ends that check or unify their operands' dtypes
    before ``cls.apply`` (linear, conv, matmul, the losses, the norms): they see what the op will get, and
    the cast in ``apply`` is then a no-op. ``args`` as they are while no autocast region is open."""
    hook = _function.autocast
    return args if hook is None else hook(cls, args)


def _device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'; minitensor "
                           f"supports {', '.join(_DEVICE_TYPES)}")
    return device_type


class autocast:
    """``with autocast("cuda"):`` or ``@autocast("cpu", dtype=minitensor.bfloat16)``: ops in the region
    follow the policy table. ``enabled=False`` turns it off inside an enclosing region; regions nest and
    restore the state they found on exit."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _device_type(device_type)
        self.fast_dtype = _state.dtype[self.device] if dtype is None else _dt.as_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        if self._enabled and self.device == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled and self.fast_dtype not in _SUPPORTED[self.device]:
            names = " and ".join(d.name for d in _SUPPORTED[self.device])
            warnings.warn(f"In {self.device} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{self.device} Autocast only supports dtypes of {names} currently.",
                          UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self) -> None:
        global _active
        s = _state
        self._prev = (s.enabled[self.device], s.dtype[self.device], s.cache_enabled)
        s.enabled[self.device] = self._enabled
        s.dtype[self.device] = self.fast_dtype
        s.cache_enabled = self._cache_enabled
        s.nesting += 1
        if self._enabled:
            with _lock:
                _active += 1
                _function.autocast = cast_inputs

    def __exit__(self, *exc: Any) -> None:
        global _active
        s = _state
        s.nesting -= 1
        if s.nesting == 0:
            s.cache.clear()
        s.enabled[self.device], s.dtype[self.device], s.cache_enabled = self._prev
        if self._enabled:
            with _lock:
                _active -= 1
                if _active == 0:
                    _function.autocast = None

    def __call__(self, func: F) -> F:
        """As a decorator: each call of ``func`` runs in a region with these settings."""

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return run  # type: ignore[return-value]


_RULES: dict[tuple[type, str], str | None] = {}  # POLICY by class and device type, filled as ops are met


def cast_inputs(cls: type, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` of one ``cls.apply`` call, its floating tensors cast as the policy of their device type says
    for ``cls`` when autocast is on for that device in this thread (else ``args`` as they are)."""
    from ..tensor import Tensor
    tensors = [a for a in args if isinstance(a, Tensor) and a.array.dtype.kind in "fV"]
    if not tensors:
        return args
    device_type = tensors[0]._device.type
    s = _state
    if not s.enabled.get(device_type, False):
        return args
    rule = _RULES.get((cls, device_type), "?")
    if rule == "?":
        rule = _RULES[cls, device_type] = POLICY[device_type].get(cls.__name__)
    if rule is None:
        return args
    if rule == LOWER:
        target = s.dtype[device_type]
    elif rule == FP32:
        target = _dt.float32
    else:  # PROMOTE: the widest floating dtype among them
        target = _dt.from_numpy_dtype(tensors[0].array.dtype)
        for t in tensors[1:]:
            target = _dt.promote_types(target, _dt.from_numpy_dtype(t.array.dtype))
    return tuple(_cast(a, target, s) if isinstance(a, Tensor) and a.array.dtype.kind in "fV"
                 and a.array.dtype != target.np and a.array.dtype != _dt.float64.np else a for a in args)


def _cast(t: Any, target: _dt.dtype, s: _State) -> Any:
    """``t`` cast to ``target`` (differentiably); a leaf that requires grad is cast once per region."""
    from ..functional.cast import ToDtype
    if not (s.cache_enabled and t.grad_fn is None and t._requires_grad and _grad_state.grad_enabled):
        return ToDtype.apply(t, target.np)
    key = (id(t), target)
    version = t._vc[0] if t._vc is not None else 0
    hit = s.cache.get(key)
    if hit is not None and hit[0] is t and hit[1] == version:
        return hit[2]
    out = ToDtype.apply(t, target.np)
    s.cache[key] = (t, version, out)  # keeps t alive, so its id is not reused while cached
    return out
