"""``DataParallel``: for now a single-device wrapper with PyTorch's interface.

It runs ``module`` unchanged, keeps it as ``.module`` (so ``state_dict`` keys read "module.<name>", as in
PyTorch checkpoints saved from a DataParallel model) and records ``device_ids``, ``output_device`` and
``dim``. Splitting the batch over several GPUs (scatter, replicate, gather) comes later; code written
for ``nn.DataParallel`` runs as is in the meantime, on the module's own device.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..modules.module import Module


class DataParallel(Module):
    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps a Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device if output_device is not None else \
            (self.device_ids[0] if self.device_ids else None)
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
