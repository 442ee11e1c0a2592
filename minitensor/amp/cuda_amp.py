"""``minitensor.cuda.amp``: PyTorch's deprecated ``torch.cuda.amp`` aliases, with its FutureWarnings."""
from __future__ import annotations

import warnings
from typing import Any

from . import autocast_mode, grad_scaler


class autocast(autocast_mode.autocast):
    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn("`minitensor.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`minitensor.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn("`minitensor.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`minitensor.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


__all__ = ["GradScaler", "autocast"]
