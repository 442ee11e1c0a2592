"""The CPU backend: ``backend.py`` (``NumpyBackend``, NumPy bodies), ``<family>.py`` where the CPU overrides
a family (conv, pooling, optim), and ``numba_kernels/`` (optional Numba loops, imported at first use)."""
