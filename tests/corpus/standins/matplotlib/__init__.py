"""matplotlib stand-in: the corpus programs import ``matplotlib.pyplot`` at the top and save or show their
figures, which the tests never look at; ``use`` and ``pyplot``'s calls here draw nothing."""


def use(backend, force=True):
    return None
