"""(filled by the layers issue, #3)"""
from __future__ import annotations

__all__: list[str] = []
