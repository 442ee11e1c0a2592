"""The backend interface, one mixin per op family.

Every method takes and returns backend arrays (``self.xp`` arrays: NumPy on the CPU, CuPy on CUDA) and
is written once against ``self.xp``; a backend overrides a method only where a kernel pays, falling back
to ``super()`` for dtypes or layouts it does not cover. ``minitensor.backends.base.Backend`` composes them.
"""
