"""``minitensor.utils``: helpers around the core library (the data pipeline lives in ``utils.data``)."""
from . import data

from . import checkpoint

__all__ = ["data"]

__all__ += ["checkpoint"]

from . import hooks  # noqa: E402  (after data: RemovableHandle is nn's)

__all__ += ["hooks"]
