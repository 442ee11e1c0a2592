"""DDP communication hooks: ``ddp.register_comm_hook(state, hook)``, ``hook(state, bucket) -> Future``."""
from . import default_hooks

__all__ = ["default_hooks"]
