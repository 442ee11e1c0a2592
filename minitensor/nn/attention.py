"""``nn.attention``: PyTorch's ``SDPBackend`` and ``sdpa_kernel``. minitensor has one implementation of
``scaled_dot_product_attention`` per device (no flash / memory-efficient / cuDNN kernels to choose from), so
``sdpa_kernel`` checks its argument as PyTorch does and changes nothing (docs/differences.md)."""
from __future__ import annotations

import contextlib
import enum
from typing import Iterator

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False  # PyTorch's switch for warnings about unfused kernels: there are none here


class SDPBackend(enum.IntEnum):
    """The kernels PyTorch's scaled dot-product attention may use (its values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False) -> Iterator[dict]:
    """Accepted and checked; the attention runs the same whichever backends are listed."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    yield {}
