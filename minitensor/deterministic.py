"""PyTorch's determinism switch: ``use_deterministic_algorithms(mode, *, warn_only=False)`` and its queries.

On the CPU every minitensor op is deterministic already: a seeded run repeats bit for bit in a new process on
the same machine with the same BLAS kernels and thread count (docs/reproducibility.md). On CUDA the kernels
that scatter with ``atomicAdd`` (the embedding gradient, max-pool's gradient, ``index_add``) add colliding
values in whatever order the threads arrive; with the switch on they raise PyTorch's error, or warn with
``warn_only=True``, instead of running.
"""
from __future__ import annotations

import threading
import warnings

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_lock = threading.Lock()
_mode = 0  # PyTorch's debug mode: 0 off, 1 warn, 2 error (global, not per thread, as PyTorch's)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ops without a deterministic implementation raise RuntimeError (``warn_only``: warn) while ``mode``."""
    global _mode
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool for warn_only, but got "
                        f"{type(warn_only).__name__}")
    with _lock:
        _mode = (1 if warn_only else 2) if mode else 0


def are_deterministic_algorithms_enabled() -> bool:
    return _mode != 0


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _mode == 1


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """"default"/0: off; "warn"/1: warn; "error"/2: raise (PyTorch's alternative interface)."""
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    return _mode


def alert_not_deterministic(caller: str) -> None:
    """PyTorch's ``alertNotDeterministic``: called by an op before it runs a nondeterministic algorithm."""
    if _mode == 0:
        return
    message = (f"{caller} does not have a deterministic implementation, but you set "
               "'minitensor.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
               "operation, or you can use the 'warn_only=True' option, if that's acceptable for your application.")
    if _mode == 1:
        warnings.warn(message, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(message)


# PyTorch's float32 matmul precision: "highest" (full float32), "high" (TF32 or bfloat16x3 allowed), "medium"
# (bfloat16 allowed). On the GPU "high" and "medium" allow TF32 in CuPy's float32 GEMMs
# (backends/cuda/flags.py); the CPU's matmuls stay float32 (docs/differences.md).
_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Record the internal precision float32 matmuls may use; another string warns and changes nothing, as
    PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision[0] = precision
    from .backends.cuda.flags import precision_changed  # here: it imports this module
    precision_changed()


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


__all__ += ["get_float32_matmul_precision", "set_float32_matmul_precision"]
