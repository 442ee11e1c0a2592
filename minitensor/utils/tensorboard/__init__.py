"""``minitensor.utils.tensorboard``: PyTorch's ``SummaryWriter``, writing real TensorBoard event files through
the ``tensorboard`` package (the ``tensorboard`` extra: ``pip install minitensor[tensorboard]``)."""
from __future__ import annotations

try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError("minitensor.utils.tensorboard needs the tensorboard package: "
                      "pip install 'minitensor[tensorboard]' (or pip install tensorboard)") from e

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
