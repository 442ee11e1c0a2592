"""``minitensor.amp``: automatic mixed precision, PyTorch's ``torch.amp`` (docs/amp.md)."""
from __future__ import annotations

from .autocast_mode import (autocast, clear_autocast_cache, get_autocast_dtype, is_autocast_available,
                            is_autocast_cache_enabled, is_autocast_enabled)
from .grad_scaler import GradScaler

from .custom_function import custom_bwd, custom_fwd

__all__ = ["GradScaler", "autocast", "clear_autocast_cache", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_cache_enabled", "is_autocast_enabled"]
__all__ += ["custom_fwd", "custom_bwd"]
