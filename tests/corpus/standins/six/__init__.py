"""six stand-in: pytorch/examples' super_resolution imports ``urllib`` from ``six.moves`` (Python 3's own)."""
from . import moves

__all__ = ["moves"]
