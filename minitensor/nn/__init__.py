"""``minitensor.nn``: modules, layers and ``nn.functional`` (layers arrive with issue #3)."""
from __future__ import annotations

from . import functional
