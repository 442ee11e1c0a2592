"""The CPU backend: NumPy for everything, the base class's generic bodies as they are."""
from __future__ import annotations

import numpy as np

from .base import Backend


class NumpyBackend(Backend):
    name = "cpu"
    xp = np
    array_type = np.ndarray

    @classmethod
    def is_available(cls) -> bool:
        return True
