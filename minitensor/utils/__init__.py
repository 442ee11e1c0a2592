"""``minitensor.utils``: helpers around the core library (the data pipeline lives in ``utils.data``)."""
from . import data

__all__ = ["data"]
