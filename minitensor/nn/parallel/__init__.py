"""``nn.parallel``: ``DataParallel`` (a single-device wrapper for now; see its module docstring)."""
from __future__ import annotations

from .data_parallel import DataParallel

__all__ = ["DataParallel"]
