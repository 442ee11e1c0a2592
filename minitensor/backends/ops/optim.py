"""In-place optimizer updates: one call per parameter tensor, no new arrays per step."""
from __future__ import annotations

from typing import Any


class OptimOps:
    xp: Any
    # sgd_update, adam_update, rmsprop_update and adagrad_update arrive with the layers issue (#3).
