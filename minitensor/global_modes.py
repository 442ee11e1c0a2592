"""PyTorch's process-wide switches and queries that programs set at their top: anomaly mode
(``set_anomaly_enabled``), ``inference_mode``'s flag, interop threads, ``set_warn_always``,
``set_flush_denormal``, and the small predicates ``typename``, ``is_inference``, ``is_storage``."""
from __future__ import annotations

from typing import Any

from .autograd import anomaly as _anomaly
from .autograd.anomaly import is_anomaly_enabled
from .autograd.grad_mode import state
from .tensor import Tensor

__all__ = ["get_num_interop_threads", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_inference",
           "is_inference_mode_enabled", "is_storage", "is_warn_always_enabled", "set_anomaly_enabled",
           "set_flush_denormal", "set_num_interop_threads", "set_warn_always", "typename"]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``autograd.detect_anomaly``'s switch as a plain call: with ``check_nan`` every forward output and
    gradient is checked for NaN / Inf (autograd/anomaly.py)."""
    _anomaly._set(enabled, check_nan)


def is_anomaly_check_nan_enabled() -> bool:
    return state.anomaly_check_nan


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (not inside a plain ``no_grad``)."""
    return state.inference


def is_inference(input: Tensor) -> bool:
    """False: minitensor has no inference tensors (``inference_mode`` is ``no_grad`` here, so a tensor made
    inside may enter autograd later; docs/differences.md)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return False


_interop = {"threads": 1, "set": False}  # ops run on the caller's thread: no inter-op pool to size


def get_num_interop_threads() -> int:
    return _interop["threads"]


def set_num_interop_threads(nthreads: int) -> None:
    """Recorded for ``get_num_interop_threads`` (minitensor runs no inter-op pool); once only, as PyTorch."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _interop["set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _interop.update(threads=nthreads, set=True)


_warn_always = [False]


def set_warn_always(b: bool) -> None:
    """PyTorch's flag for warnings it gives once per process; minitensor's warnings are Python's, shown once
    per call site unless ``warnings`` filters say otherwise, so this only records the flag."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


def set_flush_denormal(mode: bool) -> bool:
    """False: minitensor cannot set the CPU's flush-to-zero flags from Python (NumPy keeps subnormals), and
    returns what PyTorch returns on a CPU without them (docs/differences.md)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def is_storage(obj: Any) -> bool:
    """False: minitensor has no storage objects (a tensor's memory is its backend array)."""
    return False


def typename(obj: Any) -> str:
    """'torch.FloatTensor' for a float32 CPU tensor (``Tensor.type()``), else the object's qualified class name
    ('int', 'minitensor.nn.modules.linear.Linear'), as PyTorch's."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):  # a class or function: its own name
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:  # an instance: its class's
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
