"""``minitensor.distributed.optim``: PyTorch's ``torch.distributed.optim`` names (``ZeroRedundancyOptimizer``)."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
