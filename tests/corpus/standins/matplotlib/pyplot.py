"""``matplotlib.pyplot`` without a screen: every function takes any arguments and draws nothing;
``figure`` (and ``gcf``, ``gca``, ``subplot``, ``axes``) returns a figure and ``subplots`` a figure and an array of
axes whose methods draw nothing either."""
import numpy as np


class _Drawing:
    """A figure or axes: every method takes any arguments and does nothing, and returns another drawing (so
    that ``fig.add_subplot(1, 1, 1).matshow(...)`` draws nothing too)."""

    def __getattr__(self, name):
        if name.startswith("__"):  # NumPy probes __array_struct__ and the like when it stores one
            raise AttributeError(name)

        def _nothing(*args, **kwargs):
            return _Drawing()
        return _nothing


def subplots(nrows=1, ncols=1, **kwargs):
    axes = np.array([[_Drawing() for _ in range(ncols)] for _ in range(nrows)], dtype=object)
    return _Drawing(), axes[0, 0] if nrows == ncols == 1 else axes.squeeze()


def figure(*args, **kwargs):
    return _Drawing()


gcf = gca = subplot = axes = figure


def __getattr__(name):
    def _nothing(*args, **kwargs):
        return None
    return _nothing
