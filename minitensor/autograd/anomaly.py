"""``detect_anomaly``: a NaN or Inf made by any op's forward or backward raises a RuntimeError naming the
op and, for backward, the line of user code whose forward created it. Costs a device sync per op: debug only."""
from __future__ import annotations

from typing import Any

from .grad_mode import state


def is_anomaly_enabled() -> bool:
    return state.anomaly


class set_detect_anomaly:
    def __init__(self, mode: bool) -> None:
        self._prev = state.anomaly
        state.anomaly = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        state.anomaly = self._prev


class detect_anomaly:
    """Context manager: check every op's output and every gradient for NaN and Inf."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = state.anomaly
        state.anomaly = self.check_nan

    def __exit__(self, *exc: Any) -> None:
        state.anomaly = self._prev
