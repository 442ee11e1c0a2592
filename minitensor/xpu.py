"""``minitensor.xpu``: PyTorch's Intel GPU module as a PyTorch built without XPU answers it.

minitensor has no XPU backend, so programs that probe for one (``elif torch.xpu.is_available():``, as
pytorch/tutorials' profiler recipe does) take their CPU branch: ``is_available()`` is False and
``device_count()`` 0, the seeding calls are no-ops (PyTorch queues them until a device initializes, which
never happens), the memory queries answer zero, and what needs a device raises PyTorch's AssertionError.
"""
from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["current_device", "device_count", "empty_cache", "get_device_name", "get_device_properties",
           "init", "initial_seed", "is_available", "is_bf16_supported", "is_initialized", "manual_seed",
           "manual_seed_all", "memory_allocated", "memory_reserved", "seed", "seed_all", "set_device",
           "synchronize"]


def _not_compiled(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("Torch not compiled with XPU enabled")  # PyTorch's words, which programs may match


def is_available() -> bool:
    """False: minitensor has no XPU backend."""
    return False


def device_count() -> int:
    """0 XPU devices."""
    return 0


def is_initialized() -> bool:
    """False: there is nothing to initialize."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as PyTorch without XPU."""
    return False


def manual_seed(seed: int) -> None:
    """A no-op: PyTorch defers XPU seeding to the device's initialization, which never comes."""


def manual_seed_all(seed: int) -> None:
    """A no-op, as ``manual_seed``."""


def seed() -> None:
    """A no-op, as ``manual_seed``."""


def seed_all() -> None:
    """A no-op, as ``manual_seed``."""


def empty_cache() -> None:
    """A no-op: no XPU memory is cached."""


def memory_allocated(device: Any = None) -> int:
    """0 bytes."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """0 bytes."""
    return 0


# what needs a device raises, as in PyTorch built without XPU
init = current_device = synchronize = get_device_name = get_device_properties = set_device = \
    initial_seed = _not_compiled
