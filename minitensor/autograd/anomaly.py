"""``detect_anomaly``: a NaN or Inf made by any op's forward or backward raises a RuntimeError naming the
op and, for backward, the line of user code whose forward created it. Costs a device sync per op: debug only."""
from __future__ import annotations

from typing import Any

from .grad_mode import state


def is_anomaly_enabled() -> bool:
    return state.anomaly_enabled


def _set(enabled: bool, check_nan: bool) -> tuple[bool, bool]:
    """Switch anomaly mode; returns the previous (enabled, check_nan) to restore."""
    prev = state.anomaly_enabled, state.anomaly_check_nan
    state.anomaly_enabled, state.anomaly_check_nan = bool(enabled), bool(check_nan)
    state.anomaly = state.anomaly_enabled and state.anomaly_check_nan
    return prev


class set_detect_anomaly:
    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = _set(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _set(*self._prev)


class detect_anomaly:
    """Context manager: check every op's output and every gradient for NaN and Inf (``check_nan=False``:
    anomaly mode without the checks)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = _set(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        _set(*self._prev)
