"""``GradBucket``: what a DDP communication hook gets (PyTorch's ``torch.distributed.GradBucket``)."""
from __future__ import annotations

from typing import Any


class GradBucket:
    """One bucket of a ``DistributedDataParallel`` reducer: ``buffer()`` is the flat tensor holding its
    gradients (in reverse parameter order), ``gradients()`` the per-parameter views into it."""

    def __init__(self, index: int, buffer: Any, parameters: list[Any], gradients: list[Any], is_last: bool
                 ) -> None:
        self._index, self._buffer, self._parameters = index, buffer, parameters
        self._gradients, self._is_last = gradients, is_last

    def index(self) -> int:
        return self._index

    def buffer(self) -> Any:
        return self._buffer

    def set_buffer(self, buffer: Any) -> None:
        """Replace the buffer's values (PyTorch's hooks write a result this way)."""
        self._buffer.copy_(buffer)

    def gradients(self) -> list[Any]:
        return self._gradients

    def parameters(self) -> list[Any]:
        return self._parameters

    def is_last(self) -> bool:
        return self._is_last
