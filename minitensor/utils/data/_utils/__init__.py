"""PyTorch's private path ``torch.utils.data._utils``, which custom collate functions import from."""
from . import collate

__all__ = ["collate"]
