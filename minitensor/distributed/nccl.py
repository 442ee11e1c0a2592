"""The NCCL engine (placeholder until the CuPy path lands)."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from .engine import Engine


def start_nccl(init_method: str | None, world_size: int, rank: int, timeout: timedelta, device_id: Any) -> Engine:
    raise RuntimeError("backend 'nccl' is not available yet")
