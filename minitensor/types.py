"""``minitensor.types``: PyTorch's type aliases for annotations (``Number``, ``Device``, ``_size``...)."""
from __future__ import annotations

import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int  # noqa: F401
from builtins import str as _str  # noqa: F401
from typing import IO, Sequence, Union

from .device import device as _device
from .dtypes import dtype as _dtype  # noqa: F401
from .size import Size
from .tensor import Tensor

__all__ = ["Number", "Device", "FileLike"]

# Union[...] rather than ``|``: these are evaluated at import, and ``|`` of a class with a string fails.
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list[int], tuple[int, ...]]
IntLikeType = int  # PyTorch adds SymInt (symbolic shapes), which minitensor has not
FloatLikeType = float
BoolLikeType = bool
Number = Union[int, float, bool]
_Number = (int, float, bool)  # for isinstance
FileLike = Union[str, os.PathLike[str], IO[bytes]]
Device = Union[_device, str, int, None]
