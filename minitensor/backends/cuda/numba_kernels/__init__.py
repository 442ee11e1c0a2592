"""Numba ``@cuda.jit`` kernels: the in-place optimizer updates (``optim.py``) and dropout (``dropout.py``).

Each kernel is pure: it takes preallocated arrays (flat, C-contiguous, one dtype; CuPy arrays on a GPU,
NumPy arrays under ``NUMBA_ENABLE_CUDASIM=1``) and explicitly typed scalars, and writes its results in
place; it allocates nothing and chooses no launch configuration. Every kernel walks its elements with a
grid-stride loop, so any grid covers any size. Numba compiles one instance per argument-type combination on
first use (float32 and float64 here), so the scalars must carry the array's dtype: a Python float would
type as float64 and pull a float32 kernel's arithmetic into double precision.

``launch.py`` holds what every launch shares (grid size, CuPy's current stream); the backend methods that
allocate the outputs and launch live in ``minitensor.backends.cuda.optim`` and ``.dropout``.
"""
