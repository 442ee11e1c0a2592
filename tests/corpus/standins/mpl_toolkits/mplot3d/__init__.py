"""``mpl_toolkits.mplot3d`` without a screen: ``Axes3D(fig)`` is an axes whose methods draw nothing."""
from matplotlib.pyplot import _Drawing


def Axes3D(*args, **kwargs):
    return _Drawing()
