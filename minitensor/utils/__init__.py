"""``minitensor.utils``: helpers around the core library (the data pipeline lives in ``utils.data``)."""
from . import data

from . import checkpoint

__all__ = ["data"]

__all__ += ["checkpoint"]

__all__ += ["hooks"]  # imported by the package's __init__ once nn is complete (its RemovableHandle is nn's)
