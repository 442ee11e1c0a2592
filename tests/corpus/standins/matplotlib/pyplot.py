"""``matplotlib.pyplot`` without a screen: every function takes any arguments and draws nothing;
``figure`` (and ``gcf``, ``gca``, ``subplot``, ``axes``) returns a figure and ``subplots`` a figure and an array of
axes whose methods draw nothing either."""
import numpy as np


class _Drawing:
    """A figure or axes, or a part of one: every attribute is another drawing, and calling a drawing does nothing
    and returns one (so that ``fig.add_subplot(1, 1, 1).matshow(...)`` and ``ax.yaxis.set_major_locator(...)``
    draw nothing too)."""

    def __getattr__(self, name):
        if name.startswith("__"):  # NumPy probes __array_struct__ and the like when it stores one
            raise AttributeError(name)
        return _Drawing()

    def __call__(self, *args, **kwargs):
        return _Drawing()

    def __iter__(self):  # ``line, = ax.plot(...)``: matplotlib's plot returns a list of one line per curve
        return iter([_Drawing()])


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
