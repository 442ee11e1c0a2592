"""``matplotlib.animation`` without a screen: ``FuncAnimation.save`` draws nothing but calls ``init_func`` and then
``func`` on each frame, as matplotlib does when it renders the frames it writes."""


class FuncAnimation:
    def __init__(self, fig, func, frames=None, init_func=None, fargs=None, **kwargs):
        self._func, self._init, self._fargs = func, init_func, tuple(fargs or ())
        self._frames = range(frames) if isinstance(frames, int) else (frames if frames is not None else range(1))

    def save(self, filename, writer=None, **kwargs):
        if self._init is not None:
            self._init()
        for frame in self._frames:
            self._func(frame, *self._fargs)
