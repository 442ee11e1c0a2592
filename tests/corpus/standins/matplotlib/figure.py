"""``matplotlib.figure`` without a screen: ``Figure`` is pyplot's drawing that draws nothing."""
from matplotlib.pyplot import _Drawing as Figure

__all__ = ["Figure"]
