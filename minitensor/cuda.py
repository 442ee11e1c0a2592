"""``minitensor.cuda``: PyTorch's ``torch.cuda`` names, from the CUDA backend's runtime
(``backends/cuda/runtime.py``: availability, devices, memory; ``backends/cuda/streams.py``: streams, events).

``is_available``, ``device_count`` and ``manual_seed`` never raise; everything else needs a GPU and raises a
RuntimeError saying what is missing (CuPy, a driver or a GPU) when there is none. Neither module imports CuPy
at import time, so ``import minitensor`` never imports it.
"""
from __future__ import annotations

from .backends.cuda.runtime import (current_device, device, device_count, empty_cache, get_device_name,
                                    is_available, manual_seed, manual_seed_all, max_memory_allocated,
                                    max_memory_reserved, memory_allocated, memory_reserved,
                                    reset_peak_memory_stats, set_device, synchronize)
from .backends.cuda.flags import is_bf16_supported
from .backends.cuda.streams import Event, Stream, current_stream, default_stream, stream



def __getattr__(name: str) -> object:
    """``minitensor.cuda.amp``, PyTorch's deprecated aliases, and ``cuda.FloatTensor``..., PyTorch's legacy
    CUDA types, made on first use (they need the whole package, which imports this module early)."""
    if name == "amp":
        from .amp import cuda_amp
        return cuda_amp
    if name.endswith("Tensor"):  # the legacy CUDA types (legacy.py imports the tensor modules, loaded later)
        from .legacy import CUDA_TYPES
        if name in CUDA_TYPES:
            return CUDA_TYPES[name]
    raise AttributeError(f"module 'minitensor.cuda' has no attribute {name!r}")


__all__ = ["Event", "Stream", "current_device", "current_stream", "default_stream", "device", "device_count",
           "empty_cache", "get_device_name", "is_available", "is_bf16_supported", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "set_device", "stream", "synchronize"]
