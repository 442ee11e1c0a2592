"""DLPack exchange, as ``torch.from_dlpack`` / ``torch.utils.dlpack``: tensors sharing memory with NumPy,
CuPy, PyTorch, JAX... arrays, without a copy.

``from_dlpack(x)`` takes any object with ``__dlpack__`` and ``__dlpack_device__`` and returns a Tensor over
the same memory, with the same shape and strides (non-contiguous views stay views): host memory through
``numpy.from_dlpack``, GPU memory through ``cupy.from_dlpack`` on the producer's device, safe to use on
CuPy's current stream (the producer orders its pending work before that stream). ``Tensor.__dlpack__`` is
the other direction, so ``torch.from_dlpack(t)`` shares ``t``'s memory.

Unlike PyTorch, ``from_dlpack`` does not take a bare DLPack capsule: NumPy imports one read-only, and its
device cannot be read without parsing the C struct. Pass the array itself.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..device import cpu, device
from ..tensor import Tensor, _wrap

__all__ = ["from_dlpack", "to_dlpack"]

# DLPack's DLDeviceType codes that minitensor can hold.
_HOST = (1, 3)  # kDLCPU, kDLCUDAHost (pinned host memory)
_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A Tensor sharing ``ext_tensor``'s memory (a torch tensor, a NumPy or CuPy array, a minitensor
    Tensor...): writes through one are seen through the other."""
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack() takes an object with __dlpack__ (a NumPy/CuPy array, a torch tensor, "
                        f"...), got {type(ext_tensor).__name__}; DLPack capsules are not supported")
    kind, index = (int(v) for v in ext_tensor.__dlpack_device__())
    if kind in _HOST:
        array, dev = np.from_dlpack(ext_tensor), cpu
    elif kind in _CUDA:
        from ..backends.cuda.runtime import array_from_dlpack  # the clear error without a usable GPU
        array = array_from_dlpack(ext_tensor, index)  # the producer syncs with that device's current stream
        dev = device("cuda", index)
    else:
        raise BufferError(f"from_dlpack(): DLPack device type {kind} is neither host nor CUDA memory")
    _dt.from_numpy_dtype(array.dtype)  # refuses dtypes minitensor lacks (complex, uint16...) by name
    return _wrap(array, dev)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over ``tensor``'s memory, for consumers that take capsules (PyTorch's legacy
    ``to_dlpack``); prefer passing the tensor itself to the other library's ``from_dlpack``."""
    return tensor.__dlpack__()
