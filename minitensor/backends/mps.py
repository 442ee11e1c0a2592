"""``minitensor.backends.mps``: PyTorch's ``torch.backends.mps`` queries. minitensor has no Metal backend."""
from __future__ import annotations


def is_available() -> bool:
    """False: minitensor runs on the CPU and CUDA only."""
    return False


def is_built() -> bool:
    """False: there is no MPS support to build."""
    return False
