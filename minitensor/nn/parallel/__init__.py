"""``nn.parallel``: ``DataParallel`` (a single-device wrapper for now; see its module docstring) and
``DistributedDataParallel`` (one process per replica, gradients all-reduced in buckets during backward)."""
from __future__ import annotations

from .data_parallel import DataParallel

from .distributed import DistributedDataParallel

__all__ = ["DataParallel"]
__all__ += ["DistributedDataParallel"]
